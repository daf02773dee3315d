// The per-App coordination.k8s.io/v1 Lease: create, take over when expired, release only the
// version this port acquired.
import type { KubeObject } from "../core/index.ts";
import type { KubePort } from "../reconcile/ports.ts";
import { type Call, enc, toError } from "./request.ts";

const leasePath = (ns: string, name?: string) =>
  `/apis/coordination.k8s.io/v1/namespaces/${enc(ns)}/leases${name ? `/${enc(name)}` : ""}`;

/**
 * The KubePort's Lease methods over `call`. acquireLease creates the Lease (one request when no
 * run holds it) or, on 409, takes it over when it is ours or expired (renewTime +
 * leaseDurationSeconds < now); releaseLease deletes it with a resourceVersion precondition, so
 * a Lease taken over since stays.
 */
export function createLeases(
  call: Call,
  now: () => Date,
): Pick<KubePort, "acquireLease" | "releaseLease"> {
  /** resourceVersion of each Lease this port holds, for a conditional release. */
  const heldLeases = new Map<string, string>();
  return {
    async acquireLease(namespace, name, holder, durationSeconds) {
      const at = microTime(now());
      const spec = {
        holderIdentity: holder,
        leaseDurationSeconds: durationSeconds,
        acquireTime: at,
        renewTime: at,
      };
      // Create first: one request when no run holds the Lease (the common case). Safe to send
      // again when an answer is lost: the 409 that follows is read below, and the Lease holds
      // our own holderIdentity, so it is taken.
      const created = await call("create", "POST", leasePath(namespace), {
        idempotent: true,
        body: {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name, namespace },
          spec,
        },
      });
      if (created.status < 300) {
        heldLeases.set(
          `${namespace}/${name}`,
          (created.body as KubeObject).metadata.resourceVersion ?? "",
        );
        return true;
      }
      if (created.status !== 409) throw toError(created, "create Lease");
      // It exists: take it over only if it is ours or expired (a crashed run's).
      const res = await call("get", "GET", leasePath(namespace, name));
      if (res.status === 404) return false;
      if (res.status >= 400) throw toError(res, "get Lease");
      const lease = res.body as KubeObject & { spec?: Record<string, unknown> };
      const cur = lease.spec ?? {};
      const renew = Date.parse(String(cur["renewTime"] ?? ""));
      const held = Number(cur["leaseDurationSeconds"] ?? 0) * 1000;
      const free =
        !cur["holderIdentity"] ||
        cur["holderIdentity"] === holder ||
        Number.isNaN(renew) ||
        renew + held < now().getTime();
      if (!free) return false;
      const updated = await call("update", "PUT", leasePath(namespace, name), {
        body: { ...lease, spec: { ...cur, ...spec } },
      });
      if (updated.status === 409) return false;
      if (updated.status >= 400) throw toError(updated, "update Lease");
      heldLeases.set(
        `${namespace}/${name}`,
        (updated.body as KubeObject).metadata.resourceVersion ?? "",
      );
      return true;
    },
    async releaseLease(namespace, name, _holder) {
      // Delete only the version this port acquired: a Lease taken over since stays (409).
      const key = `${namespace}/${name}`;
      const resourceVersion = heldLeases.get(key);
      if (resourceVersion === undefined) return;
      heldLeases.delete(key);
      await call("delete", "DELETE", leasePath(namespace, name), {
        body: { apiVersion: "v1", kind: "DeleteOptions", preconditions: { resourceVersion } },
      });
    },
  };
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
