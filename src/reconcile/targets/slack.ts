// Slack: one Block Kit message per event through an incoming webhook
// (https://api.slack.com/messaging/webhooks); a Held alert carries Approve and Reject buttons.
import { slackMessage } from "../../plan/index.ts";
import type { NotificationTarget } from "./target.ts";

/** The secret is the incoming-webhook URL; spec.notifications.slack.channel overrides the channel. */
export const slack: NotificationTarget<"slack"> = {
  name: "slack",
  title: "Slack",
  async post(event, { config, secret, app, http, redact }) {
    const held = event.preview && {
      revision: event.preview.revision,
      preview: event.preview.resources,
    };
    const payload = slackMessage(
      app,
      { event: event.transition, message: event.message, ...(held ? { held } : {}) },
      config.channel,
    );
    await http.post(secret, JSON.stringify(redact(payload)), {
      "content-type": "application/json",
    });
  },
};
