// Health of kinds without a dedicated rule, custom resources above all: the kstatus
// conventions (Ready, Reconciling, Stalled) that Flux, Crossplane, cert-manager and most
// controller-runtime operators follow, with a deadline for a Ready=False that never resolves.
import type { KubeObject } from "../core/index.ts";
import {
  conditionsOf,
  describe,
  findCondition,
  formatAge,
  type HealthResult,
  result,
  staleCondition,
  statusOf,
  str,
} from "./util.ts";

/**
 * How long a custom resource may stay Ready=False (by the condition's lastTransitionTime)
 * before it is Degraded: 10 minutes, the default progressDeadlineSeconds of a Deployment.
 */
export const READY_DEADLINE_MS = 10 * 60 * 1000;

/** Ready=False reasons that name a failure (CamelCase words controllers use for one). */
const FAILURE_REASON =
  /Fail|Error|Invalid|Denied|Forbidden|Unauthori[sz]ed|Conflict|Rejected|BackOff|NotFound/;

/**
 * Generic rule, after kstatus (cli-utils pkg/kstatus/status/generic.go checkGenericProperties
 * and status.go Compute), with Argo CD's view of a failed Ready:
 * - condition Stalled=True → Degraded with its reason and message.
 * - condition Reconciling=True → Progressing.
 * - condition Ready present: its own observedGeneration (metav1.Condition), when set, behind
 *   metadata.generation → Progressing (the Ready verdict is about an older spec); Ready=True →
 *   Healthy; Ready=Unknown → Progressing.
 * - Ready=False → Degraded when its reason names a failure (ReconciliationFailed, SyncError,
 *   InvalidSpec, AccessDenied, SecretNotFound...) or when it has been False for
 *   {@link READY_DEADLINE_MS} or longer by its lastTransitionTime; otherwise (also without a
 *   lastTransitionTime: no sign it is stuck) Progressing. kstatus reports any Ready=False as InProgress and leaves failure to Stalled,
 *   which few controllers write, so a failed resource would never alert; Argo CD's
 *   per-kind health scripts mostly report Ready=False as Degraded at once, which also fires
 *   on a resource that is merely starting.
 * - no Ready condition: status.phase Failed or Error → Degraded; else Healthy ("Resource is
 *   current" in kstatus).
 * The status.observedGeneration check runs before this in assessHealth.
 */
export function genericHealth(o: KubeObject, now: Date): HealthResult {
  const conds = conditionsOf(o);
  const stalled = findCondition(conds, "Stalled");
  if (stalled?.status === "True") return result("Degraded", describe(stalled));
  const reconciling = findCondition(conds, "Reconciling");
  if (reconciling?.status === "True") return result("Progressing", describe(reconciling));
  const ready = findCondition(conds, "Ready");
  if (!ready) {
    const phase = str(statusOf(o)["phase"]);
    if (phase === "Failed" || phase === "Error") {
      const message = str(statusOf(o)["message"]);
      return result("Degraded", message ? `${phase}: ${message}` : phase);
    }
    return result("Healthy");
  }
  const stale = staleCondition(o, ready);
  if (stale) return stale;
  if (ready.status === "True") return result("Healthy", ready.message);
  if (ready.status !== "False") return result("Progressing", describe(ready));
  if (ready.reason && FAILURE_REASON.test(ready.reason)) return result("Degraded", describe(ready));
  const age = ready.since === undefined ? undefined : now.getTime() - ready.since;
  if (age !== undefined && age >= READY_DEADLINE_MS) {
    return result("Degraded", `not ready for ${formatAge(age)}: ${describe(ready)}`);
  }
  return result("Progressing", describe(ready));
}
