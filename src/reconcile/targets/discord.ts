// Discord: Execute Webhook with the message and an embed
// (https://discord.com/developers/docs/resources/webhook#execute-webhook).
import { discordMessage } from "../../plan/index.ts";
import type { NotificationTarget } from "./target.ts";

/** The secret is the webhook URL; spec.notifications.discord.username overrides its name. */
export const discord: NotificationTarget<"discord"> = {
  name: "discord",
  title: "Discord",
  async post(event, { config, secret, http, redact }) {
    await http.post(secret, JSON.stringify(redact(discordMessage(event, config.username))), {
      "content-type": "application/json",
    });
  },
};
