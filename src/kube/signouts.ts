// Signed-out web sessions, recorded in the cluster: one coordination.k8s.io/v1 Lease per
// session, held until the session would have expired, so every plumb process (Node `plumb
// serve`, the Worker) refuses its cookie from then on without keeping anything itself.
import type { KubeObject } from "../core/index.ts";
import { type Call, enc, toError } from "./request.ts";

/** Label of the Leases that record a signed-out session. */
export const SIGNED_OUT_LABEL = "plumb.dev/signed-out-session";
/** Records swept per sign-out (the expired ones of a list page). */
const SWEEP_PAGE = 500;

const leases = (ns: string, name?: string) =>
  `/apis/coordination.k8s.io/v1/namespaces/${enc(ns)}/leases${name ? `/${enc(name)}` : ""}`;

/** Sign-out records: what the web page's sessions are checked against. */
export interface SignOutRecords {
  /**
   * Records that the session named `name` (a DNS label, e.g. a hash of the session id) was
   * signed out: a Lease `name` in `namespace` held until `until` (its expiry). Idempotent: a
   * record already there (409) is success. Then deletes, best effort, records of sessions that
   * have expired since (one list page), so they do not accumulate.
   * @throws KubeApiError when the record could not be written (namespace missing: 404;
   *   Leases not allowed there: 403)
   */
  recordSignOut(namespace: string, name: string, until: Date): Promise<void>;
  /**
   * Whether a sign-out of session `name` is recorded in `namespace` (a missing namespace holds
   * none). One GET.
   * @throws KubeApiError on any other failure: the caller must not take it for "signed in"
   */
  signedOut(namespace: string, name: string): Promise<boolean>;
}

/** The sign-out records over `call`, with `now` for the records' times. */
export function createSignOutRecords(call: Call, now: () => Date): SignOutRecords {
  return {
    async recordSignOut(namespace, name, until) {
      const at = now();
      const seconds = Math.max(1, Math.ceil((until.getTime() - at.getTime()) / 1000));
      const res = await call("create", "POST", leases(namespace), {
        // Safe to send again: the 409 a landed first attempt causes is success here.
        idempotent: true,
        body: {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name, namespace, labels: { [SIGNED_OUT_LABEL]: "true" } },
          spec: {
            holderIdentity: "signed-out",
            leaseDurationSeconds: seconds,
            acquireTime: microTime(at),
            renewTime: microTime(at),
          },
        },
      });
      if (res.status >= 300 && res.status !== 409) {
        throw toError(res, `record the sign-out in namespace ${namespace}`);
      }
      await sweep(call, namespace, at).catch(() => undefined);
    },
    async signedOut(namespace, name) {
      const res = await call("get", "GET", leases(namespace, name));
      if (res.status === 404) return false;
      if (res.status >= 300) throw toError(res, `read sign-outs in namespace ${namespace}`);
      return true;
    },
  };
}

/** Deletes the records in `namespace` whose session has expired by `at` (one list page). */
async function sweep(call: Call, namespace: string, at: Date): Promise<void> {
  const res = await call("list", "GET", leases(namespace), {
    query: { labelSelector: SIGNED_OUT_LABEL, limit: String(SWEEP_PAGE) },
  });
  if (res.status >= 300) return;
  const items = (res.body as { items?: Array<KubeObject & { spec?: Record<string, unknown> }> })
    .items;
  for (const lease of items ?? []) {
    const renew = Date.parse(String(lease.spec?.["renewTime"] ?? ""));
    const seconds = Number(lease.spec?.["leaseDurationSeconds"] ?? 0);
    if (Number.isNaN(renew) || renew + seconds * 1000 > at.getTime()) continue;
    // Only the version read: a record written again since stays.
    await call("delete", "DELETE", leases(namespace, lease.metadata.name), {
      body: {
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { resourceVersion: lease.metadata.resourceVersion },
      },
    });
  }
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
