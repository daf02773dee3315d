// Remote destinations: connect to the cluster spec.destination.cluster names, and
// prune what the inventory still has on a former destination. The App, its status, Events and
// Lease stay on ports.kube; only objects go through the ClusterPort built here.
import {
  type AppSpec,
  type ClusterRecord,
  type InventoryEntry,
  KUBECONFIG_KEYS,
  type KubeconfigSecretRef,
  ORPHAN_UNREACHABLE,
} from "../app/index.ts";
import {
  DestinationError,
  describeRef,
  EventReason,
  err,
  FailureReason,
  type ObjectRef,
  ok,
  type Result,
  refKey,
} from "../core/index.ts";
import {
  type Failure,
  type PruneSkip,
  planPrune,
  type RunEvent,
  splitInventory,
} from "../plan/index.ts";
import { guardCascades } from "./cascade.ts";
import { atDestination, type RunContext } from "./context.ts";
import { listLive } from "./observe.ts";
import { claimedByOthers } from "./ownership.ts";
import type { ClusterPort, Ports, RemoteCluster, RequestCounts } from "./ports.ts";
import { executePrune, type PruneOutcome, pruneErrors } from "./prune.ts";

/**
 * The connect step: the run's context at its destination. Without spec.destination.cluster, `ctx` as
 * it is (the cluster the App lives in). Otherwise the kubeconfig is read from the Secret
 * (key `secretRef.key`, else "value", then "value.yaml": Flux's convention) and connected.
 * @returns DestinationInvalid (a missing Secret or key, a kubeconfig refused or malformed, a
 *   runtime without remote destinations: not transient, the Secret must change) or
 *   DestinationUnreachable (transient: retried with backoff). Nothing has run on any cluster.
 */
export async function connectDestination(
  ctx: RunContext,
  spec: AppSpec,
): Promise<Result<RunContext, Failure>> {
  const secretRef = spec.destination.cluster?.secretRef;
  if (!secretRef) return ok(ctx);
  const remote = await reach(ctx, secretRef);
  if (!remote.ok) return remote;
  return ok(atDestination(ctx, { server: remote.value.server, secretRef }, remote.value.cluster));
}

/** What pruneDeparted did on the clusters the App no longer deploys to. */
export interface DepartedOutcome {
  /** Entries still on other clusters (failed deletes), to carry into status. */
  remaining: InventoryEntry[];
  events: RunEvent[];
  /** Set when a former cluster could not be reached (nothing was deleted there) or deletes failed. */
  failure?: Failure;
}

/**
 * Prunes the inventory's entries on clusters other than the run's destination (a former
 * destination, or all of them when the App is deleted), each through the Secret recorded for it
 * in status.clusters (the cluster the App lives in through ports.kube), with planPrune's rules
 * and exact ownership on that cluster. syncPolicy.prune false leaves them there and drops them.
 * A cluster that cannot be reached keeps its entries and sets DestinationUnreachable, unless the
 * App is annotated `plumb.dev/orphan-unreachable: "true"`: then its entries are dropped
 * (Orphaned Event) — the way out when a cluster is gone for good.
 */
export async function pruneDeparted(ctx: RunContext, prune: boolean): Promise<DepartedOutcome> {
  const out: DepartedOutcome = { remaining: [], events: [] };
  if (ctx.departed.length === 0) return out;
  const unreachable: string[] = [];
  const failedDeletes: string[] = [];
  for (const [server, entries] of byCluster(ctx.departed)) {
    const where = server ?? "the cluster the App lives in";
    if (!prune) {
      out.events.push({
        type: "Normal",
        reason: EventReason.Orphaned,
        message: `left ${entries.length} object(s) on ${where} (syncPolicy.prune is false)`,
      });
      continue;
    }
    const port = server === undefined ? ok(ctx.ports.kube) : await reachRecorded(ctx, server);
    if (!port.ok) {
      if (ctx.app.metadata.annotations?.[ORPHAN_UNREACHABLE] === "true") {
        out.events.push({
          type: "Warning",
          reason: EventReason.Orphaned,
          message: `left ${entries.length} object(s) on ${where}, which cannot be reached (${ORPHAN_UNREACHABLE}): ${port.error.message}`,
        });
        continue;
      }
      unreachable.push(`${where} (${entries.length} object(s)): ${port.error.message}`);
      out.remaining.push(...entries);
      continue;
    }
    const refs = splitInventory(entries, server).here;
    const deleted = await pruneOn(ctx, port.value, server, refs);
    // Failed deletes, and what the cascade guard kept (it could not check, or others' objects
    // would go with it), stay (on that cluster) for the next run, as on the destination.
    const stay = [...deleted.failed.map((f) => f.ref), ...deleted.kept.map((k) => k.ref)];
    out.remaining.push(...stay.map((ref) => ({ ...ref, ...clusterField(server) })));
    if (deleted.failed.length > 0) failedDeletes.push(...pruneErrors(deleted));
    if (deleted.deleted.length > 0) {
      out.events.push({
        type: "Normal",
        reason: EventReason.Pruned,
        message: `pruned from ${where}: ${deleted.deleted.map(describeRef).join(", ")}`,
      });
    }
    for (const refused of deleted.refused) {
      out.events.push({
        type: "Warning",
        reason: EventReason.PruneSkipped,
        message: `on ${where}: ${refused.reason}`,
      });
    }
  }
  if (unreachable.length > 0) {
    out.failure = {
      reason: FailureReason.DestinationUnreachable,
      message: `cannot reach a former destination to prune what the App left there: ${unreachable.join("; ")} (annotate the App ${ORPHAN_UNREACHABLE}: "true" to leave those objects)`,
      stalled: false,
    };
  } else if (failedDeletes.length > 0) {
    out.failure = {
      reason: FailureReason.PruneFailed,
      message: `could not prune from a former destination: ${failedDeletes.join("; ")}`,
      stalled: false,
    };
  }
  return out;
}

/** What pruneOn did on one former destination. */
interface DepartedPrune extends PruneOutcome {
  /** Skips to keep in the inventory (what the cascade guard kept). */
  kept: PruneSkip[];
  /** Skips worth a Warning Event (a deletion that would take others' objects with it). */
  refused: PruneSkip[];
}

/**
 * Prunes `refs` on a former destination `cluster` (`server`; undefined: the cluster the App
 * lives in) with the rules of the destination's own prune: planPrune, then guardCascades (a
 * Namespace or CRD whose deletion takes others' objects on that cluster is kept), every delete fenced by the run's Lease (executePrune).
 */
async function pruneOn(
  ctx: RunContext,
  cluster: ClusterPort,
  server: string | undefined,
  refs: readonly ObjectRef[],
): Promise<DepartedPrune> {
  const live = await listLive(refs, ctx.ref, cluster);
  const owners = await claimedByOthers(ctx, server, refs.map(refKey));
  const there = { ...ctx, cluster, inventory: refs };
  const plan = await guardCascades(
    there,
    planPrune({
      inventory: refs,
      desired: [],
      live,
      claimedByOthers: new Set(owners.keys()),
      claimants: owners,
      app: ctx.ref,
    }),
  );
  return {
    ...(await executePrune(there, plan)),
    kept: plan.skip.filter((s) => s.keep),
    refused: plan.skip.filter((s) => s.warn),
  };
}

/** Entries grouped by cluster (undefined: the cluster the App lives in), in first-seen order. */
function byCluster(entries: readonly InventoryEntry[]): Map<string | undefined, InventoryEntry[]> {
  const out = new Map<string | undefined, InventoryEntry[]>();
  for (const e of entries) out.set(e.cluster, [...(out.get(e.cluster) ?? []), e]);
  return out;
}

function clusterField(server: string | undefined): { cluster?: string } {
  return server === undefined ? {} : { cluster: server };
}

/** A former destination `server`, through the Secret status.clusters records for it. */
async function reachRecorded(
  ctx: RunContext,
  server: string,
): Promise<Result<ClusterPort, Failure>> {
  const record: ClusterRecord | undefined = ctx.prev.clusters?.find((c) => c.server === server);
  if (!record) return err(unreachable(`no Secret is recorded for ${server} in status.clusters`));
  const remote = await reach(ctx, record.secretRef);
  if (!remote.ok) return remote;
  if (remote.value.server !== server) {
    return err(
      unreachable(
        `Secret ${secretName(ctx, record.secretRef)} now names ${remote.value.server}, not ${server}`,
      ),
    );
  }
  return ok(remote.value.cluster);
}

/** Reads the kubeconfig Secret and connects (DestinationPort.connect). */
async function reach(
  ctx: RunContext,
  secretRef: KubeconfigSecretRef,
): Promise<Result<RemoteCluster, Failure>> {
  const destinations = ctx.ports.destinations;
  if (!destinations) {
    return err(invalid("this plumb cannot reach other clusters (no destination port configured)"));
  }
  const name = secretName(ctx, secretRef);
  const data = await ctx.ports.kube.getSecret(ctx.ref.namespace, secretRef.name);
  if (!data) return err(invalid(`Secret ${name} not found`));
  const keys = secretRef.key ? [secretRef.key] : [...KUBECONFIG_KEYS];
  const key = keys.find((k) => data[k] !== undefined && data[k] !== "");
  if (!key) return err(invalid(`Secret ${name} has no kubeconfig under ${keys.join(" or ")}`));
  try {
    const remote = await destinations.connect(data[key]!, `Secret ${name} key ${key}`);
    for (const credential of remote.credentials) ctx.ports.redactor?.add(credential);
    return ok(remote);
  } catch (e) {
    if (!(e instanceof DestinationError)) throw e;
    return err(e.kind === "invalid" ? invalid(e.message) : unreachable(e.message));
  }
}

function secretName(ctx: RunContext, ref: KubeconfigSecretRef): string {
  return `${ctx.ref.namespace}/${ref.name}`;
}

function invalid(message: string): Failure {
  return {
    reason: FailureReason.DestinationInvalid,
    message: `destination: ${message}`,
    stalled: false,
    transient: false,
  };
}

function unreachable(message: string): Failure {
  return {
    reason: FailureReason.DestinationUnreachable,
    message: `destination unreachable: ${message}`,
    stalled: false,
  };
}

/**
 * `ports` whose DestinationPort remembers the clusters it connected, and the requests sent to
 * them so far: a run's request counts include its remote destinations.
 */
export function countingRemotes(ports: Ports): { ports: Ports; counts(): Partial<RequestCounts> } {
  const destinations = ports.destinations;
  if (!destinations) return { ports, counts: () => ({}) };
  const connected: RemoteCluster[] = [];
  return {
    ports: {
      ...ports,
      destinations: {
        async connect(kubeconfig, source) {
          const remote = await destinations.connect(kubeconfig, source);
          connected.push(remote);
          return remote;
        },
      },
    },
    counts() {
      const out: Partial<RequestCounts> = {};
      for (const remote of connected) {
        for (const [verb, n] of Object.entries(remote.requestCounts?.() ?? {})) {
          const v = verb as keyof RequestCounts;
          out[v] = (out[v] ?? 0) + n;
        }
      }
      return out;
    },
  };
}
