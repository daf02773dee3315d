// The per-App Lease: two overlapping runs never interleave their applies.

import type { App } from "../app/index.ts";
import { nameOf } from "../core/index.ts";
import type { Ports } from "./ports.ts";

/** Seconds a Lease is held before another run may take it over (a crashed run's lease expires). */
export const LEASE_SECONDS = 60;
const WAIT_MS = 30_000;
const POLL_MS = 500;

/** Thrown when another run held the Lease for the whole wait; the caller re-runs from the start. */
export class LeaseBusyError extends Error {
  constructor(app: App) {
    super(`another run holds the lease of App ${nameOf(app.metadata)}`);
    this.name = "LeaseBusyError";
  }
}

/** Name of the coordination.k8s.io/v1 Lease of an App (in the App's namespace). */
export function leaseName(app: App): string {
  return `plumb-app-${app.metadata.name}`.slice(0, 253);
}

/**
 * Runs `fn` holding the App's Lease. When another holder has it, waits (up to 30 s) for it to
 * be released and then throws LeaseBusyError, so the caller starts over from a fresh read of
 * the App (the other run has changed its status).
 */
export async function withLease<T>(app: App, ports: Ports, fn: () => Promise<T>): Promise<T> {
  const ns = app.metadata.namespace;
  const name = leaseName(app);
  if (!(await ports.kube.acquireLease(ns, name, ports.holder, LEASE_SECONDS))) {
    const sleep = ports.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
    for (let waited = 0; waited < WAIT_MS; waited += POLL_MS) {
      await sleep(POLL_MS);
      if (await ports.kube.acquireLease(ns, name, ports.holder, LEASE_SECONDS)) {
        await ports.kube.releaseLease(ns, name, ports.holder);
        break;
      }
    }
    throw new LeaseBusyError(app);
  }
  try {
    return await fn();
  } finally {
    await ports.kube.releaseLease(ns, name, ports.holder).catch(() => undefined);
  }
}
