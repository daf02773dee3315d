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
} from "./util.ts";

/**
 * cert-manager.io/Certificate, after Argo CD (resource_customizations/cert-manager.io/
 * Certificate/health.lua):
 * - condition Issuing=True → Progressing (a certificate is being issued or renewed);
 * - else Ready=False → Degraded: cert-manager keeps Ready=False while issuance has failed
 *   (Issuing=False, reason Failed, with a back-off before the next attempt) or the spec is
 *   invalid, and it does not write kstatus' Stalled, so Progressing would never alert;
 * - Ready=True → Healthy;
 * - no condition yet → Progressing "waiting for certificate".
 * A Ready condition written for an older generation (its observedGeneration) → Progressing.
 * certmanager.k8s.io/Certificate (no Issuing condition) follows the same rule.
 */
export function certificateHealth(o: KubeObject): HealthResult {
  const conds = conditionsOf(o);
  const issuing = findCondition(conds, "Issuing");
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
