// The apply step: server-side apply in stages (CRDs and Namespaces first, then the rest), with
// exact ownership; a failure on one object is recorded on it and the others still apply.
import {
  describeRef,
  groupOf,
  type KubeObject,
  type ObjectRef,
  refKey,
  refOf,
} from "../core/index.ts";
import { assessSet } from "../health/index.ts";
import {
  autoscaledApplyForms,
  type FailedApply,
  REPLICAS_HANDOVER_MANAGER,
  replicasHandover,
  sharedNamespaceForm,
  unchangedTtlJobs,
} from "../plan/index.ts";
import { hookOf, syncWaveOf } from "../render/index.ts";
import { applyObject } from "./apply-object.ts";
import type { RunContext } from "./context.ts";
import { type HookRecord, planHooks, runHookEvent } from "./hooks.ts";
import { keepIgnored } from "./ignore.ts";
import { isRestart } from "./lease.ts";
import type { ClusterPort } from "./ports.ts";
import { prepareTakeover } from "./takeover.ts";

export interface ApplyOutcome {
  /** Objects as the API server stored them (for health), by refKey. */
  applied: Map<string, KubeObject>;
  /** Failures by refKey: a short message, and whether retrying the same render can help. */
  failed: Map<string, FailedApply>;
  /** Objects whose apply failed but which exist (for their own health), by refKey. */
  existing: Map<string, KubeObject>;
  /** Objects deleted and created again (plumb.dev/recreate), with the immutable fields. */
  recreated: Array<{ ref: ObjectRef; fields: string[] }>;
  /** Objects another tool made that this run took over (spec.adopt). */
  adopted?: ObjectRef[];
  /** Set when a pre-sync hook failed: the rest was not applied, and nothing may be pruned. */
  halted?: string;
  /**
   * Objects of later sync waves not applied yet because an earlier wave is not healthy (and
   * post hooks, which follow the last wave), with why, by refKey: the run ends Progressing and
   * the next one goes on. Nothing may be pruned meanwhile.
   */
  pending: Map<string, string>;
  /**
   * Jobs not applied because their TTL removed them once finished (unchangedTtlJobs), and hooks
   * gone once run (deleted by their delete policy, or not run in this apply and absent).
   */
  finished: Set<string>;
  /**
   * refKeys of failed objects the API server may have stored all the same: the answer was
   * lost or a 5xx/429 after the transport's retries (an earlier attempt may have landed), or a
   * CRD created but not Established in time. The inventory keeps them.
   */
  uncertain: Set<string>;
}

const FIRST_STAGE = new Set(["Namespace", "CustomResourceDefinition"]);

/**
 * Applies the desired objects this App may own: an object another App's inventory lists
 * (`owners`, from claimedByOthers) is not applied and fails with a message naming its owner —
 * an object is managed by one App, never taken over. Namespaces may be shared (sharedForms). An object that
 * exists without being this App's is refused unless `adopt`, and an apply-if-absent object
 * that exists is left alone (prepareTakeover). A workload an HPA of the render
 * scales is applied without spec.replicas once both were applied before (autoscaledApplyForms). Objects in `unchanged` are not applied (their form was applied
 * and they were seen as desired); they still count as the render's, e.g. an HPA among them.
 */
export async function applyDesired(
  ctx: RunContext,
  objects: readonly KubeObject[],
  owners: ReadonlyMap<string, readonly string[]>,
  adopt = false,
  hashes?: ReadonlyMap<string, string>,
  unchanged: ReadonlySet<string> = new Set(),
): Promise<ApplyOutcome> {
  const contested = new Map<string, string>();
  const candidates = objects.filter((o) => !unchanged.has(refKey(refOf(o))));
  const claimed = candidates.filter((o) => {
    const key = refKey(refOf(o));
    const owner = o.kind === "Namespace" ? undefined : owners.get(key)?.join(", ");
    if (owner) {
      contested.set(
        key,
        `${describeRef(refOf(o))} belongs to App ${owner} (in its inventory); an object is managed by one App`,
      );
    }
    return owner === undefined;
  });
  const mine = await sharedForms(claimed, owners, ctx);
  // A Job with a TTL applied in this very form is not applied again: its TTL may have removed
  // it, finished. It is read instead: live, or gone and done.
  const ttlJobs = unchangedTtlJobs(mine, ctx.inventory, hashes);
  const toApply = mine.filter((o) => !ttlJobs.has(refKey(refOf(o))));
  const takeover = await prepareTakeover(ctx, toApply, adopt);
  const owned = new Set(ctx.inventory.map(refKey));
  const kept = await keepIgnored(ctx, takeover.apply);
  const forms = autoscaledApplyForms(kept, owned, objects);
  const outcome = await applyStaged(
    forms.objects,
    ctx.cluster,
    ctx.ports.sleep,
    redactOf(ctx),
    releaseAction(ctx),
    waveGate(ctx.cluster, ctx.now, objects),
  );
  for (const [key, live] of takeover.present) outcome.applied.set(key, live);
  for (const [key, message] of takeover.refused)
    outcome.failed.set(key, { message, terminal: false });
  for (const [key, message] of contested) outcome.failed.set(key, { message, terminal: false });
  if (takeover.adopted.length > 0) outcome.adopted = takeover.adopted;
  for (const obj of mine.filter((o) => ttlJobs.has(refKey(refOf(o))))) {
    const key = refKey(refOf(obj));
    try {
      const live = await ctx.cluster.get(refOf(obj));
      if (live) outcome.existing.set(key, live);
      else outcome.finished.add(key);
    } catch (e) {
      outcome.failed.set(key, {
        message: e instanceof Error ? e.message : String(e),
        terminal: false,
      });
    }
  }
  await handOverReplicas(forms.handover, outcome, ctx);
  return outcome;
}

/**
 * What this apply is to the release: an install while the App has applied nothing on this
 * destination (its inventory there is empty), an upgrade after that — Helm's `upgrade
 * --install` tells them apart by whether the release exists (cmd/helm/upgrade.go).
 */
export function releaseAction(ctx: RunContext): "install" | "upgrade" {
  return ctx.inventory.length === 0 ? "install" : "upgrade";
}

/**
 * Checks a sync wave is healthy before the next is applied (gitops-engine
 * pkg/sync/sync_context.go: a wave's resources must be healthy before the next wave starts).
 * For each desired object of wave `wave` (`objects`: the whole render, those left alone as
 * unchanged included; hooks and Namespaces/CRDs, applied before, left out): its health from the
 * API server's answer of this apply, else from a read. Never waits.
 */
export interface WaveGate {
  /** The waves of the whole render (its plain objects after the first stage). */
  waves: readonly number[];
  /** Why wave `wave` is not healthy yet, or undefined when it is. */
  check(wave: number, applied: ReadonlyMap<string, KubeObject>): Promise<string | undefined>;
}

export function waveGate(
  cluster: ClusterPort,
  now: Date,
  objects: readonly KubeObject[],
): WaveGate {
  const plain = objects.filter((o) => !FIRST_STAGE.has(o.kind) && hookOf(o) === undefined);
  const waves = [...new Set(plain.map(syncWaveOf))];
  const check: WaveGate["check"] = async (wave, applied) => {
    const members = plain.filter((o) => syncWaveOf(o) === wave);
    const live = new Map<string, KubeObject>();
    for (const obj of members) {
      const key = refKey(refOf(obj));
      const seen = applied.get(key) ?? (await cluster.get(refOf(obj)));
      if (seen) live.set(key, seen);
    }
    const health = assessSet(members.map(refOf), live, now);
    const waiting = members.filter((o) => health.byKey.get(refKey(refOf(o)))?.status !== "Healthy");
    if (waiting.length === 0) return undefined;
    const named = waiting.map((o) => {
      const h = health.byKey.get(refKey(refOf(o)));
      return `${describeRef(refOf(o))} ${h?.status ?? "Unknown"}`;
    });
    return `waiting for sync wave ${wave} to be healthy (${named.join(", ")})`;
  };
  return { waves, check };
}

/**
 * A Namespace other Apps render too keeps the tracking labels of the one that applied it first
 * (sharedNamespaceForm): one read of each such Namespace.
 */
async function sharedForms(
  objects: readonly KubeObject[],
  owners: ReadonlyMap<string, readonly string[]>,
  ctx: RunContext,
): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const obj of objects) {
    const claimants = obj.kind === "Namespace" ? (owners.get(refKey(refOf(obj))) ?? []) : [];
    if (claimants.length === 0) {
      out.push(obj);
      continue;
    }
    const live = await ctx.cluster.get(refOf(obj)).catch(() => undefined);
    out.push(sharedNamespaceForm(obj, live, claimants));
  }
  return out;
}

/**
 * Gives the replicas of each newly autoscaled workload that applied to the hand-over field
 * manager (one apply each, once per workload and HPA pair), so plumb's later applies can leave
 * spec.replicas out without resetting it. A failure is logged: the next apply retries nothing,
 * but the autoscaler sets replicas again within its sync period.
 */
async function handOverReplicas(
  keys: ReadonlySet<string>,
  outcome: ApplyOutcome,
  ctx: RunContext,
): Promise<void> {
  for (const key of keys) {
    const stored = outcome.applied.get(key);
    const handover = stored && replicasHandover(stored);
    if (!handover) continue;
    try {
      await ctx.cluster.apply(handover, { fieldManager: REPLICAS_HANDOVER_MANAGER });
    } catch (e) {
      ctx.ports.log?.({
        app: ctx.id,
        msg: "replicas hand-over failed",
        object: key,
        error: String(e),
      });
    }
  }
}
const CRD_WAIT_MS = 30_000;

/**
 * Applies `objects` in stages. After the first stage (Namespaces, CRDs), waits (polling every
 * 500 ms, up to 30 s) until every applied CRD is Established and its kind is in discovery, so
 * custom resources of those kinds in the second stage are served (Flux and Argo CD apply CRDs
 * first for the same reason).
 * Objects annotated helm.sh/hook run as hooks of `action` (hooks.ts): pre-<action> ones before
 * the rest, post-<action> ones after it; when a pre hook fails nothing else is applied and
 * `halted` says why. Hooks of other events (all of them without an action: a selfHeal) are not
 * applied; each is read, live (for its health) or gone (done, in `finished`).
 */
export async function applyStaged(
  objects: readonly KubeObject[],
  cluster: ClusterPort,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  redact?: (text: string) => string,
  action?: "install" | "upgrade",
  gate?: WaveGate,
): Promise<ApplyOutcome> {
  const out: ApplyOutcome = {
    pending: new Map(),
    applied: new Map(),
    failed: new Map(),
    existing: new Map(),
    recreated: [],
    finished: new Set(),
    uncertain: new Set(),
  };
  const hooks = planHooks(objects, action);
  const first = hooks.plain.filter((o) => FIRST_STAGE.has(o.kind));
  const rest = hooks.plain.filter((o) => !FIRST_STAGE.has(o.kind));
  await applyAll(first, cluster, sleep, out, redact);
  const crds = first.filter(
    (o) => o.kind === "CustomResourceDefinition" && out.applied.has(refKey(refOf(o))),
  );
  if (crds.length > 0) await waitEstablished(crds, cluster, sleep, out);
  await readIdle(hooks.idle, cluster, out);
  const record: HookRecord = { applied: out.applied, failed: out.failed, deleted: out.finished };
  // Helm hooks: the pre event's groups run to completion before the rest; a failed one stops
  // the apply, as in Helm and Argo CD.
  const failure = await runHookEvent(hooks.pre, cluster, sleep, record);
  if (failure) {
    const skipped = [...hooks.pre.flat(), ...rest, ...hooks.post.flat()];
    for (const o of skipped) {
      const key = refKey(refOf(o));
      if (!out.failed.has(key) && !out.applied.has(key)) {
        out.failed.set(key, { message: `not applied: pre-sync ${failure}`, terminal: false });
      }
    }
    out.halted = failure;
    return out;
  }
  // Sync waves: ascending; each is applied once the one before it is healthy (gate).
  const waves = [...new Set([...rest.map(syncWaveOf), ...(gate?.waves ?? [])])].sort(
    (a, b) => a - b,
  );
  for (const [i, wave] of waves.entries()) {
    await applyAll(
      rest.filter((o) => syncWaveOf(o) === wave),
      cluster,
      sleep,
      out,
      redact,
    );
    // Only when a later wave has something to apply: the last wave's health is the sync's.
    const later = rest.some((o) => syncWaveOf(o) > wave) || hooks.post.length > 0;
    const waiting =
      later && i < waves.length - 1 && gate ? await gate.check(wave, out.applied) : undefined;
    if (waiting) {
      const held = [...rest.filter((o) => syncWaveOf(o) > wave), ...hooks.post.flat()];
      for (const o of held) out.pending.set(refKey(refOf(o)), `not applied yet: ${waiting}`);
      return out;
    }
  }
  await runHookEvent(hooks.post, cluster, sleep, record);
  return out;
}

/** Hooks that do not run in this apply: live ones for their health, gone ones done. */
async function readIdle(
  idle: readonly KubeObject[],
  cluster: ClusterPort,
  out: ApplyOutcome,
): Promise<void> {
  for (const obj of idle) {
    const key = refKey(refOf(obj));
    try {
      const live = await cluster.get(refOf(obj));
      if (live) out.existing.set(key, live);
      else out.finished.add(key);
    } catch (e) {
      out.failed.set(key, { message: e instanceof Error ? e.message : String(e), terminal: false });
    }
  }
}

async function applyAll(
  objects: readonly KubeObject[],
  cluster: ClusterPort,
  sleep: (ms: number) => Promise<void>,
  out: ApplyOutcome,
  redact?: (text: string) => string,
): Promise<void> {
  for (const obj of objects) {
    const key = refKey(refOf(obj));
    const done = await applyObject(obj, cluster, sleep, redact);
    if (done.ok) {
      out.applied.set(key, done.stored);
      if (done.recreated) out.recreated.push({ ref: refOf(obj), fields: done.recreated });
    } else {
      out.failed.set(key, { message: done.message, terminal: done.terminal });
      if (done.live) out.existing.set(key, done.live);
      // Not surely refused, and not surely absent: the API server may have stored it.
      if (!done.terminal && done.live !== null) out.uncertain.add(key);
    }
  }
}

async function waitEstablished(
  crds: readonly KubeObject[],
  cluster: ClusterPort,
  sleep: (ms: number) => Promise<void>,
  out: ApplyOutcome,
): Promise<void> {
  for (let waited = 0; ; waited += 500) {
    const pending: KubeObject[] = [];
    for (const crd of crds) {
      const key = refKey(refOf(crd));
      const live = out.applied.get(key);
      if (live && isEstablished(live) && (await served(live, cluster))) continue;
      const fresh = await cluster.get(refOf(crd));
      if (fresh) out.applied.set(key, fresh);
      if (!fresh || !isEstablished(fresh) || !(await served(fresh, cluster))) pending.push(crd);
    }
    if (pending.length === 0) return;
    if (waited >= CRD_WAIT_MS) {
      for (const crd of pending) {
        const key = refKey(refOf(crd));
        out.failed.set(key, {
          message: `${describeRef(refOf(crd))} is not Established after 30s`,
          terminal: false,
        });
        out.uncertain.add(key);
      }
      return;
    }
    await sleep(500);
  }
}

/**
 * Discovery lists the CRD's kind (in its first served version). The API server marks a CRD
 * Established before its discovery document shows the group-version (the apiextensions
 * DiscoveryController catches up asynchronously, later on a loaded server), and a custom
 * resource applied in between is refused as an unknown kind.
 */
async function served(crd: KubeObject, cluster: ClusterPort): Promise<boolean> {
  const spec = crd["spec"] as
    | {
        group?: string;
        names?: { kind?: string };
        versions?: Array<{ name?: string; served?: boolean }>;
      }
    | undefined;
  const version = spec?.versions?.find((v) => v.served !== false)?.name;
  const kind = spec?.names?.kind;
  if (!spec?.group || !version || !kind) return true;
  return (await cluster.resourceFor(`${spec.group}/${version}`, kind)) !== undefined;
}

function isEstablished(crd: KubeObject): boolean {
  const conds =
    (crd["status"] as { conditions?: Array<{ type: string; status: string }> } | undefined)
      ?.conditions ?? [];
  return conds.some((c) => c.type === "Established" && c.status === "True");
}

/** Kinds a Restart operation restarts (kubectl rollout restart's set). */
const RESTARTABLE = new Set(["apps/Deployment", "apps/StatefulSet", "apps/DaemonSet"]);

/**
 * Restarts the workloads in `inventory` the way `kubectl rollout restart` does: a pod
 * template annotation with the time, applied under its own field manager (plumb-restart) so
 * that plumb's next apply neither removes it nor reports it as drift.
 * @returns the refs restarted and the failures by refKey
 */
export async function restartWorkloads(
  inventory: readonly ObjectRef[],
  cluster: ClusterPort,
  now: Date,
): Promise<{ restarted: ObjectRef[]; failed: Map<string, string> }> {
  const restarted: ObjectRef[] = [];
  const failed = new Map<string, string>();
  for (const ref of inventory) {
    const group = groupOf(ref.apiVersion);
    if (!RESTARTABLE.has(`${group}/${ref.kind}`)) continue;
    const patch: KubeObject = {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
      spec: {
        template: { metadata: { annotations: { "plumb.dev/restartedAt": now.toISOString() } } },
      },
    };
    try {
      await cluster.apply(patch, { fieldManager: "plumb-restart" });
      restarted.push(ref);
    } catch (err) {
      if (isRestart(err)) throw err;
      failed.set(refKey(ref), err instanceof Error ? err.message : String(err));
    }
  }
  return { restarted, failed };
}

/** The run's redactor as a function, when the runtime gives one. */
export function redactOf(ctx: RunContext): ((text: string) => string) | undefined {
  const redactor = ctx.ports.redactor;
  return redactor ? (text) => redactor.redact(text) : undefined;
}
