// Health rules for cert-manager's kinds (cert-manager.io, and the certmanager.k8s.io API of
// releases before v0.11), after Argo CD's resource_customizations for them.
import type { KubeObject } from "../core/index.ts";
import {
  conditionsOf,
  describe,
  findCondition,
  type HealthResult,
  result,
  staleCondition,
  statusOf,
  str,
} from "./util.ts";

/**
 * cert-manager.io/Certificate, after Argo CD (resource_customizations/cert-manager.io/
 * Certificate/health.lua) except where a certificate is being renewed:
 * - Ready=True for the current generation → Healthy, also while condition Issuing=True: a
 *   renewal (Issuing=True, reason Renewing, or a manual re-issue) keeps serving the current
 *   certificate until the new one is stored, so the App stays Healthy, with the renewal in
 *   the message, as is a renewal that failed and waits to retry (Issuing=False, reason
 *   Failed). Argo CD checks Issuing first and so calls a renewing certificate Progressing
 *   for as long as the renewal takes (as its users report); a renewal that keeps failing
 *   would leave the App Progressing for days while the old certificate still serves.
 *   Past status.notAfter the certificate serves no more: Degraded, whatever Ready says
 *   (cert-manager writes Ready=False, reason Expired, on its next look);
 * - else Issuing=True → Progressing (a first issuance, or one after a spec change);
 * - else Ready=False → Degraded: cert-manager keeps Ready=False while issuance has failed
 *   (Issuing=False, reason Failed, with a back-off before the next attempt) or the spec is
 *   invalid, and it does not write kstatus' Stalled, so Progressing would never alert;
 * - no condition yet → Progressing "waiting for certificate".
 * A Ready condition written for an older generation (its observedGeneration) → Progressing.
 * certmanager.k8s.io/Certificate (no Issuing condition) follows the same rule.
 */
export function certificateHealth(o: KubeObject, now: Date): HealthResult {
  const conds = conditionsOf(o);
  const issuing = findCondition(conds, "Issuing");
  const ready = findCondition(conds, "Ready");
  if (ready?.status === "True" && !staleCondition(o, ready)) {
    const notAfter = str(statusOf(o)["notAfter"]);
    const expiry = notAfter === undefined ? Number.NaN : Date.parse(notAfter);
    if (expiry <= now.getTime()) return result("Degraded", `certificate expired at ${notAfter}`);
    const serving = ready.message ?? "certificate is ready";
    if (issuing?.status === "True") {
      return result("Healthy", `${serving}; renewing: ${describe(issuing)}`);
    }
    if (issuing?.status === "False" && issuing.reason === "Failed") {
      return result("Healthy", `${serving}; renewal failed, retried later: ${describe(issuing)}`);
    }
    return result("Healthy", ready.message);
  }
  if (issuing?.status === "True") return result("Progressing", `issuing: ${describe(issuing)}`);
  return readyOrProgressing(o, "waiting for certificate");
}

/**
 * cert-manager.io/Issuer and ClusterIssuer (and certmanager.k8s.io/Issuer), after Argo CD's
 * health.lua for them: Ready=False → Degraded (e.g. the ACME account could not be
 * registered), Ready=True → Healthy, no condition yet → Progressing "initializing issuer".
 */
export function issuerHealth(o: KubeObject): HealthResult {
  return readyOrProgressing(o, "initializing issuer");
}

function readyOrProgressing(o: KubeObject, waiting: string): HealthResult {
  const ready = findCondition(conditionsOf(o), "Ready");
  const stale = staleCondition(o, ready);
  if (stale) return stale;
  if (ready?.status === "False") return result("Degraded", describe(ready));
  if (ready?.status === "True") return result("Healthy", ready.message);
  return result("Progressing", waiting);
}
