// Notifications: Slack.
export * from "./slack.ts";
