// The per-App coordination.k8s.io/v1 Lease: create, take over when expired, renew and release
// only the version this port holds.
import type { KubeObject } from "../core/index.ts";
import type { KubePort, LeaseClaim } from "../reconcile/ports.ts";
import { type Call, enc, toError } from "./request.ts";

const leasePath = (ns: string, name?: string) =>
  `/apis/coordination.k8s.io/v1/namespaces/${enc(ns)}/leases${name ? `/${enc(name)}` : ""}`;

type Lease = KubeObject & { spec?: Record<string, unknown> };

/**
 * The KubePort's Lease methods over `call`.
 * - acquireLease: creates the Lease (one request when no run holds it); when it exists, reads
 *   it and takes it over (PUT, conditional on its resourceVersion) when it is `holder`'s or
 *   expired. After a port has found the Lease present it reads first, so a run waiting for
 *   another polls with one GET per attempt. A create whose answer was lost (the server made
 *   it) is found on the next attempt: the Lease names `holder`, so it is taken.
 * - renewLease: one PUT of the held version with renewTime now; on 409 the Lease is read, and
 *   when it still names `holder` (an earlier renewal landed but its answer was lost) it is kept.
 * - releaseLease: DELETE with a resourceVersion precondition, so a Lease taken over since stays
 *   (409) — as does one already gone (404). Other failures throw, for the caller to retry.
 */
export function createLeases(
  call: Call,
  now: () => Date,
): Pick<KubePort, "acquireLease" | "renewLease" | "releaseLease"> {
  /** The Lease as this port last wrote it, per namespace/name it holds. */
  const held = new Map<string, Lease>();
  /** Leases found present by this port (the next attempt reads before creating). */
  const present = new Set<string>();

  const keep = (key: string, lease: Lease) => {
    held.set(key, lease);
    present.add(key);
  };

  async function read(namespace: string, name: string): Promise<Lease | undefined> {
    const res = await call("get", "GET", leasePath(namespace, name));
    if (res.status === 404) return undefined;
    if (res.status >= 400) throw toError(res, `get Lease ${namespace}/${name}`);
    return res.body as Lease;
  }

  return {
    async acquireLease(namespace, name, holder, durationSeconds): Promise<LeaseClaim> {
      const key = `${namespace}/${name}`;
      const at = microTime(now());
      const spec = {
        holderIdentity: holder,
        leaseDurationSeconds: durationSeconds,
        acquireTime: at,
        renewTime: at,
      };
      let lease = present.has(key) ? await read(namespace, name) : undefined;
      if (!lease) {
        // Safe to send again when an answer is lost (the transport may): the 409 that follows
        // is read below, and the Lease holds this run's holderIdentity, so it is taken.
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
          keep(key, created.body as Lease);
          return { acquired: true };
        }
        if (created.status !== 409) throw toError(created, `create Lease ${key}`);
        present.add(key);
        lease = await read(namespace, name);
        if (!lease) return { acquired: false, holder: "", expiresAt: now() };
      }
      const cur = lease.spec ?? {};
      const current = String(cur["holderIdentity"] ?? "");
      const expiresAt = leaseExpiry(cur);
      const free = !current || current === holder || expiresAt.getTime() < now().getTime();
      if (!free) return { acquired: false, holder: current, expiresAt };
      const updated = await call("update", "PUT", leasePath(namespace, name), {
        body: { ...lease, spec: { ...cur, ...spec } },
      });
      if (updated.status === 409) return { acquired: false, holder: current, expiresAt: now() };
      if (updated.status >= 400) throw toError(updated, `update Lease ${key}`);
      keep(key, updated.body as Lease);
      return { acquired: true };
    },

    async renewLease(namespace, name, holder, durationSeconds) {
      const key = `${namespace}/${name}`;
      const mine = held.get(key);
      if (!mine) return false;
      const spec = {
        ...mine.spec,
        holderIdentity: holder,
        leaseDurationSeconds: durationSeconds,
        renewTime: microTime(now()),
      };
      const res = await call("update", "PUT", leasePath(namespace, name), {
        body: { ...mine, spec },
      });
      if (res.status < 300) {
        keep(key, res.body as Lease);
        return true;
      }
      if (res.status !== 409 && res.status !== 404) throw toError(res, `renew Lease ${key}`);
      // A conflict after a resent renewal whose first answer was lost: still ours?
      const lease = res.status === 409 ? await read(namespace, name) : undefined;
      if (lease && lease.spec?.["holderIdentity"] === holder) {
        keep(key, lease);
        return true;
      }
      held.delete(key);
      return false;
    },

    async releaseLease(namespace, name, _holder) {
      const key = `${namespace}/${name}`;
      const mine = held.get(key);
      if (mine === undefined) return;
      const resourceVersion = mine.metadata.resourceVersion ?? "";
      const res = await call("delete", "DELETE", leasePath(namespace, name), {
        body: { apiVersion: "v1", kind: "DeleteOptions", preconditions: { resourceVersion } },
      });
      // 404: gone already (an earlier attempt landed); 409: taken over since. Either way not ours.
      if (res.status >= 400 && res.status !== 404 && res.status !== 409) {
        throw toError(res, `delete Lease ${key}`);
      }
      held.delete(key);
      if (res.status < 300 || res.status === 404) present.delete(key);
    },
  };
}

/** renewTime + leaseDurationSeconds; the epoch when either is missing (an expired Lease). */
function leaseExpiry(spec: Record<string, unknown>): Date {
  const renew = Date.parse(String(spec["renewTime"] ?? ""));
  const seconds = Number(spec["leaseDurationSeconds"] ?? 0);
  if (Number.isNaN(renew) || !Number.isFinite(seconds)) return new Date(0);
  return new Date(renew + seconds * 1000);
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
