// What every step of one run shares: the App as read at the start, its last status, the ports
// and the run's clock. A plain value; the steps return what they found.
import type { App, AppStatus, InventoryEntry } from "../app/index.ts";
import { type NamespacedName, nameOf } from "../core/index.ts";
import type { HealthChecks } from "../health/index.ts";
import {
  type DestinationRecord,
  type EffectivePolicy,
  effectivePolicy,
  type SourceHint,
  settingsNotice,
  splitInventory,
} from "../plan/index.ts";
import type { HelmValuesRef } from "../render/index.ts";
import type { ClusterPort, Ports } from "./ports.ts";

/** How a run was asked for: what its trigger knows that the App does not say. */
export interface RunOptions {
  /**
   * The run owes a full comparison (fetch, render, drift): the App's slot in its interval came,
   * or a person asked for the run. Otherwise a run that finds nothing new only looks at health.
   */
  compare?: boolean | undefined;
  /**
   * The revision the tick or a webhook resolved for a source (once per repository and ref);
   * used only when it names the App's own source (hintFits), else the run resolves it itself.
   */
  source?: SourceHint | undefined;
}

export interface RunContext {
  /** The App as read at the start of the run (its resourceVersion guards the status write). */
  readonly app: App;
  /** status as read at the start (empty for a new App). */
  readonly prev: AppStatus;
  readonly ports: Ports;
  /** The run's clock: every time written to status derives from it. */
  readonly now: Date;
  /** The App's namespace and name. */
  readonly ref: NamespacedName;
  /** "namespace/name", for messages and logs. */
  readonly id: string;
  /** status.inventory on `cluster`: what the App owned there when the run started (with
   *  applied-form hashes). */
  readonly inventory: readonly InventoryEntry[];
  /** The cluster the App's objects go to: ports.kube unless spec.destination.cluster names one. */
  readonly cluster: ClusterPort;
  /** The run owes a full comparison (RunOptions.compare). */
  readonly compare: boolean;
  /** A revision resolved for the App's source by the trigger (RunOptions.source). */
  readonly hint: SourceHint | undefined;
  /** The remote destination; undefined for the cluster the App lives in. */
  readonly destination?: DestinationRecord;
  /**
   * status.inventory entries on other clusters (a former destination): carried into status
   * until pruned there (destination.ts).
   */
  readonly departed: readonly InventoryEntry[];
  /** spec.healthChecks compiled at step 2 (absent before, or for an invalid spec). */
  readonly healthChecks?: HealthChecks;
  /** The App's Lease, while the run holds it (takeLease); writes ensure it first. */
  readonly lease?: LeaseHold;
  /** What one attempt of the run read once and shares between its steps (listAppsOnce). */
  readonly memo?: RunMemo;
  /**
   * The rules the App follows: the process's settings until the run has read the cluster's
   * AppPolicies (withPolicy), then theirs.
   */
  readonly policy: EffectivePolicy;
  /** spec.source.helm.valuesFrom as this run read it (values-from.ts); absent: none. */
  readonly valuesFrom?: readonly HelmValuesRef[];
}

/** Reads one attempt of a run shares (the contexts derived from one runContext share it). */
export interface RunMemo {
  /** Every App of the cluster, as first listed by this attempt. */
  apps?: Promise<App[]>;
}

/**
 * Every App of the cluster, listed once per attempt of a run: the ownership check (the other
 * Apps' inventories) and the dependants woken when the run made its App Ready read the same
 * list. A dependant created since is not woken early: its own run waits for its slot, as it
 * would had it been created a moment after this run.
 */
export function listAppsOnce(ctx: RunContext): Promise<App[]> {
  if (!ctx.memo) return ctx.ports.kube.listApps();
  ctx.memo.apps ??= ctx.ports.kube.listApps();
  return ctx.memo.apps;
}

/** A Lease a run holds (lease.ts). */
export interface LeaseHold {
  /**
   * Resolves when the Lease is surely still this run's (renewing it first when due); throws
   * LeaseLostError otherwise. Called before every write.
   */
  ensure(): Promise<void>;
  /** Aborted (reason: LeaseLostError) once the Lease may be another's: writes carry it. */
  readonly signal: AbortSignal;
  /**
   * Says the run's App was written under the Lease by a write conditional on the
   * resourceVersion the run read, that landed at the first try (trackInventory): the App had
   * not changed, so no re-read of it is owed before the writes that follow (takeLease, 2).
   */
  confirm(): void;
}

/** The context of a run over `app`, its objects on the cluster it lives in (ports.kube). */
export function runContext(
  app: App,
  ports: Ports,
  now: Date,
  options: RunOptions = {},
): RunContext {
  const prev = app.status ?? {};
  const ref = { namespace: app.metadata.namespace, name: app.metadata.name };
  const { here, elsewhere } = splitInventory(prev.inventory ?? [], undefined);
  return {
    app,
    prev,
    ports,
    now,
    ref,
    id: nameOf(ref),
    inventory: here,
    cluster: ports.kube,
    compare: options.compare === true,
    hint: options.source,
    departed: elsewhere,
    policy: effectivePolicy(undefined, ref.namespace, policySettings(ports)),
    memo: {},
  };
}

/** The process's own policy settings (Ports.allowedDestinations, allowedClusterKinds). */
export function policySettings(ports: Ports) {
  return {
    allowedDestinations: ports.allowedDestinations ?? [],
    allowedClusterKinds: ports.allowedClusterKinds ?? [],
  };
}

/**
 * `ctx` under the cluster's AppPolicies (KubePort.listPolicies on the App's own cluster); a
 * process whose settings they override says so once (logged).
 * @throws KubeApiError when the policies cannot be read: the run must not guess
 */
export async function withPolicy(ctx: RunContext): Promise<RunContext> {
  const policies = await ctx.ports.kube.listPolicies();
  const settings = policySettings(ctx.ports);
  const policy = effectivePolicy(policies, ctx.ref.namespace, settings);
  const notice = settingsNotice(policy, ctx.ref.namespace, settings);
  if (notice && !noticed.has(notice)) {
    noticed.add(notice);
    ctx.ports.log?.({ msg: notice });
  }
  return { ...ctx, policy };
}

/** Notices already logged by this process (each once). */
const noticed = new Set<string>();

/** `ctx` with its objects on the remote `destination`, reached through `cluster`. */
export function atDestination(
  ctx: RunContext,
  destination: DestinationRecord,
  cluster: ClusterPort,
): RunContext {
  const { here, elsewhere } = splitInventory(ctx.prev.inventory ?? [], destination.server);
  return { ...ctx, inventory: here, departed: elsewhere, cluster, destination };
}
