// Google Chat: a text message through a space's incoming webhook
// (https://developers.google.com/workspace/chat/quickstart/webhooks).
import { googleChatMessage } from "../../plan/index.ts";
import type { NotificationTarget } from "./target.ts";

/** The secret is the webhook URL (its key and token are in the query). */
export const googlechat: NotificationTarget<"googlechat"> = {
  name: "googlechat",
  title: "Google Chat",
  async post(event, { secret, http, redact }) {
    await http.post(secret, JSON.stringify(redact(googleChatMessage(event))), {
      "content-type": "application/json; charset=UTF-8",
    });
  },
};
