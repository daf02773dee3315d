// The notification targets, one entry per key of spec.notifications (NOTIFICATION_TARGETS).
import type { TargetName } from "../../app/index.ts";
import { slack } from "./slack.ts";
import type { NotificationTarget } from "./target.ts";

export type { NotificationTarget, TargetContext } from "./target.ts";

export const TARGETS: { readonly [K in TargetName]: NotificationTarget<K> } = {
  slack,
};
