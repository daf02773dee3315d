// The notification targets, one entry per key of spec.notifications (NOTIFICATION_TARGETS).
import type { TargetName } from "../../app/index.ts";
import { gitea, github, gitlab } from "./commit-status.ts";
import { discord } from "./discord.ts";
import { generic } from "./generic.ts";
import { googlechat } from "./googlechat.ts";
import { msteams } from "./msteams.ts";
import { slack } from "./slack.ts";
import type { NotificationTarget } from "./target.ts";

export { hmacSha256Hex } from "./generic.ts";
export type { NotificationTarget, TargetContext } from "./target.ts";

export const TARGETS: { readonly [K in TargetName]: NotificationTarget<K> } = {
  slack,
  generic,
  msteams,
  discord,
  googlechat,
  github,
  gitlab,
  gitea,
};
