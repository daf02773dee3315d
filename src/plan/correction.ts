// What a selfHeal correction did, for status.lastDriftCorrection and its alert. Pure.
import type { DriftEntry } from "../app/index.ts";
import { describeRef, refKey } from "../core/index.ts";

/** Objects named in status.lastDriftCorrection (status stays small). */
const MAX_NAMED = 10;

/** A correction as RunRecord carries it: how many objects, and each described. */
export interface CorrectionRecord {
  count: number;
  objects: string[];
}

/**
 * The objects of `drift` whose refKey is in `applied`, each as "Kind ns/name: path by manager,
 * ..." (a deleted object: "Kind ns/name: deleted"), at most 10 named.
 */
export function describeCorrection(
  drift: readonly DriftEntry[],
  applied: ReadonlySet<string>,
): CorrectionRecord {
  const fixed = drift.filter((d) => applied.has(refKey(d)));
  const objects = fixed.slice(0, MAX_NAMED).map((d) => {
    const fields = d.fields.map((f) =>
      f.path === "(object)" ? "deleted" : f.manager ? `${f.path} by ${f.manager}` : f.path,
    );
    return `${describeRef(d)}: ${fields.join(", ")}`;
  });
  return { count: Math.max(applied.size, fixed.length), objects };
}
