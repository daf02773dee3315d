// Notifications: outgoing HTTP for the notification targets.
export * from "./http.ts";
