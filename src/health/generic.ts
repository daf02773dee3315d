// Health of kinds without a dedicated rule, custom resources above all: the kstatus
// conventions (Ready, Reconciling, Stalled) that Flux, Crossplane, cert-manager and most
// controller-runtime operators follow.

import type { KubeObject } from "../core/index.ts";
import { conditionsOf, describe, findCondition, type HealthResult, result } from "./util.ts";

/**
 * Generic rule, after kstatus (cli-utils pkg/kstatus/status/generic.go checkGenericProperties
 * and status.go Compute):
 * - condition Stalled=True → Degraded with its reason and message.
 * - condition Reconciling=True → Progressing.
 * - condition Ready present: its own observedGeneration (metav1.Condition), when set, behind
 *   metadata.generation → Progressing (the Ready verdict is about an older spec); Ready=True →
 *   Healthy; Ready=False or Unknown → Progressing with its reason and message. A failure that
 *   will not fix itself is expected to come with Stalled=True, as kstatus prescribes.
 * - no status or none of these conditions → Healthy ("Resource is current" in kstatus).
 * The status.observedGeneration check runs before this in assessHealth.
 */
export function genericHealth(o: KubeObject): HealthResult {
  const conds = conditionsOf(o);
  const stalled = findCondition(conds, "Stalled");
  if (stalled?.status === "True") return result("Degraded", describe(stalled));
  const reconciling = findCondition(conds, "Reconciling");
  if (reconciling?.status === "True") return result("Progressing", describe(reconciling));
  const ready = findCondition(conds, "Ready");
  if (!ready) return result("Healthy");
  const generation = o.metadata.generation;
  if (
    ready.observedGeneration !== undefined &&
    generation !== undefined &&
    ready.observedGeneration < generation
  ) {
    return result("Progressing", `waiting for the controller to observe generation ${generation}`);
  }
  if (ready.status === "True") return result("Healthy", ready.message);
  return result("Progressing", describe(ready));
}
