// Microsoft Teams: an Adaptive Card through a Power Automate workflow webhook (Teams' Office 365
// connectors are retired; Flux's msteams provider sends the same card: internal/notifier/teams.go).
import { teamsMessage } from "../../plan/index.ts";
import type { NotificationTarget } from "./target.ts";

/** The secret is the workflow's webhook URL. */
export const msteams: NotificationTarget<"msteams"> = {
  name: "msteams",
  title: "Microsoft Teams",
  async post(event, { secret, http, redact }) {
    await http.post(secret, JSON.stringify(redact(teamsMessage(event))), {
      "content-type": "application/json",
    });
  },
};
