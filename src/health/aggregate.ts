// Rolls the health of an App's objects up into one status and a reason naming the culprits.
import type { HealthStatus } from "../app/schema.ts";
import { type HealthResult, plural } from "./util.ts";

/** Health statuses, worst first: the order aggregateHealth ranks by. */
export const HEALTH_ORDER: readonly HealthStatus[] = [
  "Degraded",
  "Missing",
  "Progressing",
  "Suspended",
  "Unknown",
  "Healthy",
];

/** One object's health, as aggregateHealth takes it. */
export interface HealthItem {
  kind: string;
  namespace?: string | undefined;
  name: string;
  health: HealthResult;
}

/** How many of the worst objects the reason names before "and N more". */
const MAX_NAMED = 3;

/** Position in HEALTH_ORDER: lower is worse. */
export function healthRank(status: HealthStatus): number {
  return HEALTH_ORDER.indexOf(status);
}

/**
 * Worst-first aggregate: Degraded > Missing > Progressing > Suspended > Unknown > Healthy.
 * Unknown ranks just above Healthy (unlike Argo CD, where it is worst): an object plumb cannot
 * judge should not hide one it can.
 * @returns the worst status and a reason naming the worst objects, in input order, up to three,
 *   e.g. "Deployment team-a/web: 1 of 2 replicas available; and 2 more"; when all are Healthy,
 *   "all 4 objects healthy"; for no objects, Healthy "no objects".
 */
export function aggregateHealth(items: ReadonlyArray<HealthItem>): {
  status: HealthStatus;
  reason: string;
} {
  if (items.length === 0) return { status: "Healthy", reason: "no objects" };
  let worst = healthRank("Healthy");
  for (const item of items) worst = Math.min(worst, healthRank(item.health.status));
  const status = HEALTH_ORDER[worst] ?? "Unknown";
  if (status === "Healthy") {
    const n = items.length;
    return { status, reason: n === 1 ? "1 object healthy" : `all ${n} objects healthy` };
  }
  const culprits = items.filter((i) => i.health.status === status);
  const named = culprits.slice(0, MAX_NAMED).map((i) => {
    const id = i.namespace ? `${i.namespace}/${i.name}` : i.name;
    return `${i.kind} ${id}: ${i.health.message ?? status}`;
  });
  const rest = culprits.length - named.length;
  if (rest > 0) named.push(`and ${plural(rest, "more object")}`);
  return { status, reason: named.join("; ") };
}
