// The heal step, correct drift: with selfHeal, re-apply the objects that drifted (or were deleted).
import type { DriftEntry } from "../app/index.ts";
import {
  describeRef,
  EventReason,
  type KubeObject,
  type ObjectRef,
  refKey,
  refOf,
} from "../core/index.ts";
import { aggregateSet, assessHealth, type SetHealth } from "../health/index.ts";
import { autoscaledApplyForms, type RunEvent } from "../plan/index.ts";
import { applyStaged, redactOf } from "./apply.ts";
import type { RunContext } from "./context.ts";
import { keepIgnored } from "./ignore.ts";
import type { Desired } from "./source.ts";
import { adopting, prepareTakeover } from "./takeover.ts";

/** What the correction did: the refKeys re-applied, and the DriftCorrected Event. */
export interface Correction {
  applied: Set<string>;
  /** The re-applied objects as the API server stored them, by refKey: they are live now. */
  stored: Map<string, KubeObject>;
  event: RunEvent;
}

/**
 * Re-applies the desired form of each drifted object (server-side apply, forced: plumb's
 * fields return to plumb). The caller holds the App's Lease (`ctx` from takeLease).
 */
export async function correctDrift(
  ctx: RunContext,
  desired: Desired,
  drift: readonly DriftEntry[],
): Promise<Correction> {
  const forms = autoscaledApplyForms(desired.objects, new Set(ctx.inventory.map(refKey)));
  const byKey = new Map(forms.objects.map((o) => [refKey(refOf(o)), o]));
  const objects = drift.map((d) => byKey.get(refKey(d))).filter((o) => o !== undefined);
  // Through prepareTakeover: a deleted Secret with generated values is recreated with new ones,
  // and an adopting App keeps its workloads' live selectors. The caller holds the Lease.
  const takeover = await prepareTakeover(ctx, objects, adopting(ctx));
  const kept = await keepIgnored(ctx, takeover.apply);
  const outcome = await applyStaged(kept, ctx.cluster, ctx.ports.sleep, redactOf(ctx));
  return {
    applied: new Set(outcome.applied.keys()),
    stored: outcome.applied,
    event: {
      type: "Normal",
      reason: EventReason.DriftCorrected,
      message: `re-applied ${drift.map((d) => describeRef(d)).join(", ")}`,
    },
  };
}

/**
 * The health of `assessed` after a correction: each re-applied object's from what the API
 * server stored (a Service re-created is Healthy, a Deployment re-created Progressing — and a
 * Progressing App is looked at again soon, plan/schedule.ts followUpSeconds), every other
 * object's as the observation found it. A run never reports Missing for an object it has just
 * created. Pure.
 * @param observed the observation's health, by refKey
 * @param stored the objects the correction applied, by refKey
 * @param now the run's clock (health rules compare deadlines with it)
 */
export function healthAfterCorrection(
  assessed: readonly ObjectRef[],
  observed: SetHealth,
  stored: ReadonlyMap<string, KubeObject>,
  now: Date,
): SetHealth {
  if (stored.size === 0) return observed;
  const byKey = new Map(observed.byKey);
  for (const [key, obj] of stored) if (byKey.has(key)) byKey.set(key, assessHealth(obj, now));
  return aggregateSet(assessed, byKey);
}
