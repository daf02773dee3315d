// Conditions in the metav1.Condition shape, with Kubernetes API conventions for transitions.
import type { Condition } from "../app/index.ts";

export type ConditionInput = Pick<Condition, "type" | "status" | "reason" | "message">;

/**
 * Sets condition `next` in `conditions` (by type), returning a new array in a stable order
 * (Ready, Reconciling, Stalled, then others). lastTransitionTime changes only when the status
 * changes (API conventions: "lastTransitionTime ... when the condition transitioned from one
 * status to another"). Messages are truncated to 32768 bytes, the metav1.Condition limit.
 */
export function setCondition(
  conditions: readonly Condition[],
  next: ConditionInput,
  now: Date,
  observedGeneration: number | undefined,
): Condition[] {
  const prev = conditions.find((c) => c.type === next.type);
  const cond: Condition = {
    type: next.type,
    status: next.status,
    reason: next.reason,
    message: truncateUtf8(next.message, 32768),
    lastTransitionTime:
      prev && prev.status === next.status ? prev.lastTransitionTime : now.toISOString(),
  };
  if (observedGeneration !== undefined) cond.observedGeneration = observedGeneration;
  const rest = conditions.filter((c) => c.type !== next.type);
  return sortConditions([...rest, cond]);
}

const ORDER = ["Ready", "Reconciling", "Stalled"];

function sortConditions(conditions: Condition[]): Condition[] {
  const rank = (t: string) => (ORDER.includes(t) ? ORDER.indexOf(t) : ORDER.length);
  return conditions.sort((a, b) => rank(a.type) - rank(b.type) || (a.type < b.type ? -1 : 1));
}

/** The condition of `type`, if present. */
export function getCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** `text` cut to at most `max` UTF-8 bytes, never inside a character. */
function truncateUtf8(text: string, max: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= max) return text;
  let end = max;
  // Back up to the first byte of a character (UTF-8 continuation bytes are 10xxxxxx).
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}
