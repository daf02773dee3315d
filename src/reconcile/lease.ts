// The per-App Lease: two overlapping runs never interleave their writes, a run whose Lease may
// have passed to another stops before writing, and a run knows the App unchanged since it read
// it before its first write.
import type { App } from "../app/index.ts";
import { KubeApiError, nameOf, transientStatus } from "../core/index.ts";
import type { LeaseHold, RunContext } from "./context.ts";
import type { ClusterPort, LeaseClaim, Ports } from "./ports.ts";

/**
 * Seconds a Lease lasts unless renewed: how long a run may wait on a Lease whose holder is
 * gone (crashed, or its release failed). Short, because the holder renews it while it runs.
 */
export const LEASE_SECONDS = 5;
/** A holder renews its Lease when this long has passed since the last renewal. */
export const RENEW_MS = 1_500;
/**
 * A holder stops writing when its last renewal was sent this long ago: the Lease's duration
 * less a second for clock skew and request latency (client-go's renewDeadline < leaseDuration).
 */
export const VALID_MS = LEASE_SECONDS * 1000 - 1_000;
/** Longest wait for a Lease that its holder keeps renewing, before the run gives up. */
export const WAIT_MS = 30_000;
/** First and longest pause between two attempts to take a busy Lease (doubling, jittered). */
const POLL_FIRST_MS = 200;
const POLL_MAX_MS = 2_000;
/**
 * Attempts to release a Lease. The transport retries a DELETE itself; the loop tries again only
 * after a failure that came back at once (an unretried error), so a release that keeps failing
 * never holds a run longer than the transport's deadline — the Lease expires in LEASE_SECONDS.
 */
const RELEASE_ATTEMPTS = 3;
const QUICK_FAILURE_MS = 1_000;

/** Another run held the Lease for the whole wait; the caller re-runs from the start. */
export class LeaseBusyError extends Error {
  constructor(app: App, holder: string) {
    super(`another run (${holder}) holds the lease of App ${nameOf(app.metadata)}`);
    this.name = "LeaseBusyError";
  }
}

/** The run could not renew its Lease in time: another run may hold it now. Nothing is written. */
export class LeaseLostError extends Error {
  constructor(app: App) {
    super(`the lease of App ${nameOf(app.metadata)} was lost before writing; the run stopped`);
    this.name = "LeaseLostError";
  }
}

/**
 * The App changed while the run waited for its Lease (another run applied and recorded, or the
 * spec was edited): what the run resolved and rendered may be stale, so it starts over.
 */
export class StaleRunError extends Error {
  constructor(app: App) {
    super(`App ${nameOf(app.metadata)} changed while this run waited for its lease`);
    this.name = "StaleRunError";
  }
}

/** True for the errors after which a run starts over from a fresh read of the App. */
export function isRestart(e: unknown): boolean {
  return e instanceof LeaseBusyError || e instanceof LeaseLostError || e instanceof StaleRunError;
}

/** Name of the coordination.k8s.io/v1 Lease of an App (in the App's namespace). */
export function leaseName(app: App): string {
  return `plumb-app-${app.metadata.name}`.slice(0, 253);
}

/** A Lease a run took (takeLease): the context whose writes it fences, and its release. */
export interface HeldLease {
  /** The run's context with `cluster` writes and `lease` fenced by the Lease. */
  readonly ctx: RunContext;
  /**
   * Resolves once the App is known unchanged since the run read it (takeLease, 2): at once
   * when that is known already, else after one re-read of it. Throws StaleRunError when it
   * changed (the caller releases the Lease as always).
   */
  verify(): Promise<void>;
  /** Stops renewing and releases the Lease (never throws: a failed release only delays others). */
  release(): Promise<void>;
}

/**
 * Takes the App's Lease for the rest of the run, with a context whose writes are fenced by it:
 * 1. take the Lease, or wait for it — each attempt is one request (two when it is free), the
 *    pause doubles from 200 ms to 2 s (jittered) and ends 50 ms past the holder's expiry when
 *    that is sooner; a holder that is gone (crashed, release failed) costs at most
 *    LEASE_SECONDS; a live holder at most WAIT_MS, then LeaseBusyError. An attempt that fails
 *    transiently (a create the transport does not resend) is one more attempt;
 * 2. know that the App is unchanged since the run read it: when its resourceVersion moved
 *    (another run applied and recorded, the spec changed), StaleRunError — a stale run never
 *    applies what it resolved over what another run applied. Proof is one re-read of the App
 *    (`verify()`), made here unless `lazy`; a lazy caller (the apply step) verifies before its
 *    first write, and a status write conditional on that resourceVersion under the Lease
 *    (trackInventory, which a run that creates objects makes anyway) stands for the re-read
 *    (`confirm()`);
 * 3. from then on `ctx.cluster` writes (apply, delete) and `ctx.lease` are fenced: the Lease is
 *    renewed every RENEW_MS (in the background and before a write that finds it due), and a
 *    write when the last renewal was sent more than VALID_MS ago throws LeaseLostError.
 *    Then `ctx.lease.signal` is aborted: every write carries it, so a transport does not send
 *    again a write it was retrying (a request already on the wire may still land: no API
 *    server takes a fencing token);
 * 4. `release()` releases it, retried (by the transport; by the loop after an immediate
 *    failure); a release that fails for good only delays the next run by LEASE_SECONDS.
 * Each run has its own holder identity (`ports.holder` and a random suffix).
 * Cost: 1 create + 1 delete for an uncontended run shorter than RENEW_MS, and 1 App read
 * unless a conditional status write confirmed the App first.
 * @param options.lazy leave step 2 to the caller (`verify()` before its first write)
 */
export async function takeLease(
  ctx: RunContext,
  options: { lazy?: boolean } = {},
): Promise<HeldLease> {
  const { app, ports } = ctx;
  const ns = app.metadata.namespace;
  const name = leaseName(app);
  const holder = `${ports.holder}-${randomSuffix()}`;
  const clock = ports.clock ?? Date.now;
  const sleep = ports.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));

  const acquiredAt = await acquire(ctx, name, holder, clock, sleep);
  const hold = new Hold(ports, { ns, name, holder }, clock, app, acquiredAt);
  const release = async () => {
    hold.stop();
    await letGo(ports, ns, name, holder, clock, sleep);
  };
  if (!options.lazy) {
    try {
      await hold.verify();
    } catch (e) {
      await release();
      throw e;
    }
  }
  return {
    ctx: { ...ctx, cluster: fenced(ctx.cluster, hold), lease: hold },
    verify: () => hold.verify(),
    release,
  };
}

/** Takes the Lease; resolves to the clock reading just before the attempt that took it. */
async function acquire(
  ctx: RunContext,
  name: string,
  holder: string,
  clock: () => number,
  sleep: (ms: number) => Promise<void>,
): Promise<number> {
  const { app, ports } = ctx;
  const ns = app.metadata.namespace;
  const start = clock();
  for (let attempt = 0; ; attempt++) {
    let claim: LeaseClaim;
    const sentAt = clock();
    try {
      claim = await ports.kube.acquireLease(ns, name, holder, LEASE_SECONDS);
    } catch (e) {
      // A create the transport does not resend (a 5xx, a reset: it may have landed) is tried
      // again: the port then finds the Lease naming this run's holder and takes it.
      if (
        !(e instanceof KubeApiError) ||
        !transientStatus(e.status) ||
        clock() - start >= WAIT_MS
      ) {
        throw e;
      }
      claim = { acquired: false, holder: "", expiresAt: new Date(clock()) };
    }
    if (claim.acquired) return sentAt;
    const waited = clock() - start;
    if (waited >= WAIT_MS) throw new LeaseBusyError(app, claim.holder);
    // Jittered backoff (runs that queue together spread out), but no later than just past the
    // holder's expiry.
    const backoff =
      Math.min(POLL_MAX_MS, POLL_FIRST_MS * 2 ** attempt) * (0.8 + 0.4 * Math.random());
    const untilExpiry = claim.expiresAt.getTime() - clock() + 50;
    const pause = Math.max(50, Math.min(backoff, untilExpiry));
    ports.log?.({ app: ctx.id, msg: "waiting for the lease", holder: claim.holder, attempt });
    await sleep(Math.min(pause, WAIT_MS - waited));
  }
}

/** Releases the Lease (see takeLease, 4). */
async function letGo(
  ports: Ports,
  ns: string,
  name: string,
  holder: string,
  clock: () => number,
  sleep: (ms: number) => Promise<void>,
): Promise<void> {
  for (let attempt = 1; attempt <= RELEASE_ATTEMPTS; attempt++) {
    const start = clock();
    try {
      await ports.kube.releaseLease(ns, name, holder);
      return;
    } catch (e) {
      ports.log?.({
        msg: "lease release failed",
        lease: `${ns}/${name}`,
        attempt,
        error: e instanceof Error ? e.message : String(e),
      });
      if (clock() - start > QUICK_FAILURE_MS || attempt === RELEASE_ATTEMPTS) return;
      await sleep(250 * 2 ** (attempt - 1));
    }
  }
}

/** The renewal state of a held Lease. */
class Hold implements LeaseHold {
  /** When the last successful renewal (or the acquisition) was sent, by `clock`. */
  private renewedAt: number;
  private lost = false;
  /** Aborted (reason: LeaseLostError) once the Lease may be another's. */
  private readonly controller = new AbortController();
  private inFlight: Promise<void> | undefined;
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly ports: Ports;
  private readonly lease: { ns: string; name: string; holder: string };
  private readonly clock: () => number;
  private readonly app: App;
  /** The check that the App is unchanged since the run read it (takeLease, 2), once made. */
  private fresh: Promise<void> | undefined;

  constructor(
    ports: Ports,
    lease: { ns: string; name: string; holder: string },
    clock: () => number,
    app: App,
    acquiredAt: number,
  ) {
    this.ports = ports;
    this.lease = lease;
    this.clock = clock;
    this.app = app;
    // The acquisition counts as a renewal, sent when its request was.
    this.renewedAt = acquiredAt;
    this.timer = setInterval(() => {
      if (this.expired()) this.lose();
      else if (this.clock() - this.renewedAt >= RENEW_MS) void this.renew().catch(() => undefined);
    }, RENEW_MS / 3);
    (this.timer as { unref?: () => void }).unref?.();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  async ensure(): Promise<void> {
    if (!this.lost && this.clock() - this.renewedAt >= RENEW_MS) {
      await this.renew().catch(() => undefined);
    }
    if (this.lost || this.expired()) {
      this.lose();
      throw new LeaseLostError(this.app);
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  confirm(): void {
    this.fresh ??= Promise.resolve();
  }

  /** Re-reads the App once; StaleRunError when its resourceVersion moved since the run read it. */
  verify(): Promise<void> {
    this.fresh ??= (async () => {
      const { metadata } = this.app;
      const fresh = await this.ports.kube.getApp(metadata.namespace, metadata.name);
      if (fresh?.metadata.resourceVersion !== metadata.resourceVersion) {
        throw new StaleRunError(this.app);
      }
    })();
    return this.fresh;
  }

  private expired(): boolean {
    return this.clock() - this.renewedAt > VALID_MS;
  }

  /** From now on every write of the run is refused, also one a transport would send again. */
  private lose(): void {
    this.lost = true;
    if (!this.controller.signal.aborted) this.controller.abort(new LeaseLostError(this.app));
  }

  /** One renewal at a time; a renewal that fails leaves the deadline where it was. */
  private renew(): Promise<void> {
    this.inFlight ??= (async () => {
      const sentAt = this.clock();
      try {
        const { ns, name, holder } = this.lease;
        const ok = await this.ports.kube.renewLease(ns, name, holder, LEASE_SECONDS);
        if (ok && !this.lost) this.renewedAt = sentAt;
        else if (!ok) this.lose();
      } finally {
        this.inFlight = undefined;
      }
    })();
    return this.inFlight;
  }
}

/** `cluster` whose writes (apply unless a dry run, delete) first ensure the Lease. */
function fenced(cluster: ClusterPort, hold: LeaseHold): ClusterPort {
  return {
    resourceFor: (apiVersion, kind) => cluster.resourceFor(apiVersion, kind),
    get: (ref) => cluster.get(ref),
    list: (apiVersion, kind, selector, namespace) =>
      cluster.list(apiVersion, kind, selector, namespace),
    listNamespaceContents: (namespace) => cluster.listNamespaceContents(namespace),
    ...(cluster.capabilities ? { capabilities: () => cluster.capabilities!() } : {}),
    async apply(obj, options) {
      if (options?.dryRun) return cluster.apply(obj, options);
      await hold.ensure();
      return cluster.apply(obj, { ...options, signal: hold.signal });
    },
    async delete(ref) {
      await hold.ensure();
      return cluster.delete(ref, { signal: hold.signal });
    },
    async patchManagedFields(ref, managedFields, resourceVersion) {
      await hold.ensure();
      return cluster.patchManagedFields(ref, managedFields, resourceVersion, {
        signal: hold.signal,
      });
    },
  };
}

function randomSuffix(): string {
  return crypto.randomUUID().slice(0, 8);
}
