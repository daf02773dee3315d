// The plan of one run: which steps it takes, against which render, and whether under the App's
// Lease, decided from the spec, the last status and what the source names now. The loop
// (reconcile/steps.ts) carries the steps out in one fixed order; this file decides. Pure.
import {
  type App,
  type AppSpec,
  type Operation,
  type SyncStatus,
  validateSpec,
} from "../app/index.ts";
import { FailureReason, GateReason, KubeApiError, type ObjectRef } from "../core/index.ts";
import { decide } from "./gates.ts";
import { retryLeftovers } from "./leftovers.ts";
import { notifies } from "./notify.ts";
import { pendingOperation } from "./operations.ts";
import type { Failure } from "./status.ts";
import { isSteady } from "./steady.ts";
import type { WindowBlock } from "./windows.ts";

/** The source's render at the revision it names now, as the plan needs it. */
export type HeadRender =
  | { ok: true; objectHash: string; refs: readonly ObjectRef[] }
  | { ok: false; failure: Failure };

/** Where a run stops: a failure recorded, nothing applied or pruned. */
export type Stop =
  /** Health observed anew (one list per kind of the inventory); a pending `operation` fails. */
  | { failure: Failure; operation?: Operation | undefined; outOfSync?: boolean; stored?: never }
  /** An error no step expected: everything but the failure is the stored status, no reads. */
  | { failure: Failure; stored: true };

/** The apply step: what it applies, why, and whether it prunes. */
export interface ApplyStep {
  /** The revision applied: the head's, or another (Rollback, Approve). */
  revision: string;
  reason: GateReason;
  /** The operation it consumes (Sync, Deploy, Rollback, Approve): the whole render is applied. */
  operation?: Operation | undefined;
  /** syncPolicy.prune: stale objects (and those on a former destination) are deleted. */
  prune: boolean;
  /** spec.adopt: objects another tool made are taken over. */
  adopt: boolean;
  /** What the source names now, and its render's objectHash when it rendered. */
  source: { revision: string; objectHash?: string | undefined };
}

/**
 * The steps of one run, each present when it runs. The loop takes them in this order, each
 * adding to the run's outcome: stop, finalize, restart, observe, hold, reject, refuse, apply
 * (with prune), heal, syncWindow, dns; then it records status and, with `notify`, announces.
 */
export interface RunPlan {
  /**
   * Some step may write (objects, DNS records, the finalizer): the App's Lease is taken before
   * the first write that runs and held until status is written.
   */
  lease: boolean;
  /**
   * The render the steps work against: the head's, another revision's (rendered before the
   * Lease is taken; a failure there stops the run: afterTargetFailed), or none.
   */
  render: "head" | "none" | { revision: string };
  /**
   * What the run found that status records as it is (observedRevision, observedObjectHash,
   * observedValuesDigest), and whether spec.freeze held everything back (Ready says so: reason
   * Frozen).
   */
  found: {
    observedRevision?: string;
    observedObjectHash?: string;
    observedValuesDigest?: string;
    frozen?: true;
  };
  stop?: Stop;
  /** The App is being deleted: prune its inventory (with `prune`), then remove the finalizer. */
  finalize?: { prune: boolean };
  /** A Restart operation: restart the inventory's workloads (before observing them). */
  restart?: { operation: Operation };
  /**
   * Observe the inventory's health and compare live with the render (when there is one);
   * `held`: the render is a preview awaiting approval, not drift. `syncStatus`: the sync status
   * the plan already knows (else the comparison decides).
   */
  observe?: { held: boolean; syncStatus?: SyncStatus | undefined };
  /** Stage the head's render for approval (status.heldRevision), nothing applied. */
  hold?: { revision: string; objectHash: string };
  /** A Reject operation: turn the held revision down. */
  reject?: { revision: string; objectHash?: string | undefined; operation: Operation };
  /** An operation the gates refused (frozen, stale approval, a sync window): consumed as Failed. */
  refuse?: { operation: Operation; message: string };
  apply?: ApplyStep;
  /**
   * selfHeal: re-apply what the observation finds drifted; while `blockedBy` (a sync window)
   * holds automated sync back, record the window instead.
   */
  heal?: { blockedBy?: WindowBlock | undefined };
  /** A sync window held automated sync back: recorded (status.nextSyncWindow). */
  syncWindow?: WindowBlock;
  /** Reconcile the DNS records of the render's Ingress hosts (when a zone is configured). */
  dns: boolean;
  /** Announce this run's transitions and redeliver the queue: the App has a target or a queue. */
  notify: boolean;
}

export interface RunPlanInput {
  /** The App as read at the start (status, generation, notifications). */
  app: App;
  /** Its spec, validated and defaulted. */
  spec: AppSpec;
  /** The revision the source names now. */
  revision: string;
  /** The digest of the valuesFrom objects read (readValuesFrom); undefined without valuesFrom. */
  valuesDigest?: string | undefined;
  /** The head's render, or undefined when it was not rendered (renderDue was false). */
  head: HeadRender | undefined;
  /** The inventory's entries on the run's destination. */
  inventory: readonly ObjectRef[];
  /** How many inventory entries are on former destinations. */
  departed: number;
  /** The cluster settings configure a DNS zone. */
  dns: boolean;
  /** The run's clock (sync windows). */
  now: Date;
}

/**
 * Whether the run renders the head: not when nothing changed since the last full run and no
 * comparison is owed (isSteady: the fast path, health only). Objects left on a former
 * destination are never steady: the full run moves them.
 * A changed valuesFrom object (another digest) renders too.
 * @param compare the run owes a full comparison (its slot came, or a person asked)
 * @param valuesDigest the digest of the valuesFrom objects read now (undefined: none)
 */
export function renderDue(
  app: App,
  spec: AppSpec,
  revision: string,
  departed: number,
  compare: boolean,
  valuesDigest?: string,
): boolean {
  return (
    departed > 0 ||
    app.status?.observedValuesDigest !== valuesDigest ||
    !isSteady(spec, app.status ?? {}, app.metadata.generation, revision, compare)
  );
}

/**
 * The plan of a run over an App that exists and is not being deleted, once its source resolved
 * (docs/design.md, "The reconcile"):
 * - not rendered (the fast path): observe health only;
 * - a head that did not render stops the run (RenderFailed or SourceFailed; a pending operation
 *   fails with it), unless a Rollback or Approve names its own revision (and the App is not
 *   frozen): a broken head does not block it;
 * - otherwise the gates decide (decide), and an up-to-date App whose inventory still lists
 *   objects its render lacks syncs again (retryLeftovers):
 *   - hold: observe the render as a preview (Held), stage it for approval;
 *   - reject: observe health only (OutOfSync), turn the held revision down;
 *   - restart: under the Lease, restart the workloads, then observe health;
 *   - apply: under the Lease, apply the decision's revision (the head's render, or another
 *     revision's rendered for it), prune, then DNS;
 *   - none: observe and compare with the render (none when it was rejected; Held when it awaits
 *     approval); refuse a pending operation the gates refused; selfHeal re-applies drift unless
 *     frozen, manual, an operation is pending or the render awaits approval — and while a sync
 *     window blocks, records the window instead; DNS is re-checked while the applied render is
 *     the desired one and the App is not frozen. Writes (heal, DNS) are under the Lease.
 */
export function planRun(input: RunPlanInput): RunPlan {
  const { app, spec, revision, head } = input;
  const status = app.status ?? {};
  const base = { lease: false, render: "none" as const, dns: false, notify: notifies(app) };
  const observed = {
    observedRevision: revision,
    ...(input.valuesDigest ? { observedValuesDigest: input.valuesDigest } : {}),
    ...(spec.freeze ? { frozen: true as const } : {}),
  };
  if (head === undefined) return { ...base, found: observed, observe: { held: false } };
  const op = pendingOperation(spec, status);
  const ownRevision = (op?.type === "Rollback" || op?.type === "Approve") && !spec.freeze;
  if (!head.ok && !ownRevision) {
    const outOfSync = revision !== status.revision;
    return { ...base, found: observed, stop: { failure: head.failure, operation: op, outOfSync } };
  }
  const found = head.ok ? { ...observed, observedObjectHash: head.objectHash } : observed;
  const objectHash = head.ok ? head.objectHash : (status.objectHash ?? "");
  const gates = decide(spec, status, { revision, objectHash }, input.now);
  const decision = head.ok
    ? retryLeftovers({
        decision: gates,
        spec,
        revision,
        inventory: input.inventory,
        desired: head.refs,
        departed: input.departed,
      })
    : gates;
  switch (decision.action) {
    case "hold":
      // Only without an operation, so the head rendered (a failed head stopped above).
      if (!head.ok) return { ...base, found, stop: { failure: head.failure } };
      return {
        ...base,
        found,
        render: "head",
        observe: { held: true, syncStatus: "Held" },
        hold: { revision, objectHash: head.objectHash },
      };
    case "reject":
      return {
        ...base,
        found,
        observe: { held: false, syncStatus: "OutOfSync" },
        reject: {
          revision: decision.revision,
          objectHash: decision.objectHash,
          operation: decision.operation,
        },
      };
    case "restart":
      return {
        ...base,
        found,
        lease: true,
        restart: { operation: decision.operation },
        observe: { held: false, syncStatus: status.syncStatus ?? "Unknown" },
      };
    case "apply":
      return {
        ...base,
        found,
        lease: true,
        render:
          head.ok && decision.revision === revision ? "head" : { revision: decision.revision },
        apply: {
          revision: decision.revision,
          reason: decision.reason,
          operation: decision.operation,
          prune: spec.syncPolicy.prune,
          adopt: spec.adopt,
          source: { revision, objectHash: head.ok ? head.objectHash : undefined },
        },
        dns: input.dns,
      };
    case "none": {
      // A held revision is still a preview and a rejected one is nobody's desired state: no
      // drift against either, so selfHeal never applies them.
      const waiting = decision.reason === GateReason.AwaitingApproval;
      const rejected = decision.reason === GateReason.Rejected;
      const compared = head.ok && !rejected;
      const heals =
        compared &&
        !waiting &&
        spec.syncPolicy.selfHeal &&
        spec.syncPolicy.automated &&
        !spec.freeze &&
        !decision.operation;
      // DNS follows what is applied: re-checked on each full run while that is the desired set.
      const applied =
        compared &&
        !spec.freeze &&
        revision === status.revision &&
        objectHash === status.objectHash;
      const dns = applied && input.dns;
      const plan: RunPlan = {
        ...base,
        found,
        render: compared ? "head" : "none",
        observe: {
          held: waiting,
          syncStatus: waiting ? "Held" : rejected ? "OutOfSync" : undefined,
        },
        lease: (heals && !decision.window) || dns,
        dns,
      };
      if (heals) plan.heal = { blockedBy: decision.window };
      if (decision.operation) {
        plan.refuse = {
          operation: decision.operation,
          message: decision.message ?? decision.reason,
        };
      }
      if (decision.window && decision.reason === GateReason.OutsideSyncWindow) {
        plan.syncWindow = decision.window;
      }
      return plan;
    }
  }
}

/**
 * The plan after the render of the apply's own revision (Rollback, Approve) failed: stop at
 * that failure (never Stalled: another revision may render), the operation failing with it;
 * nothing is written but status, so no Lease.
 */
export function afterTargetFailed(plan: RunPlan, failure: Failure): RunPlan {
  return {
    lease: false,
    render: "none",
    found: plan.found,
    stop: { failure: { ...failure, stalled: false }, operation: plan.apply?.operation },
    dns: false,
    notify: plan.notify,
  };
}

/**
 * The plan of a run that stops before the gates (an invalid spec, a destination or source
 * that failed): record `failure`, health observed anew.
 */
export function planStop(app: App, failure: Failure): RunPlan {
  return {
    lease: false,
    render: "none",
    found: {},
    stop: { failure },
    dns: false,
    notify: notifies(app),
  };
}

/**
 * The plan of a run stopped by an error no step expected — a request to the Kubernetes API
 * that still failed after the transport's retries (ApiFailed), or a bug (InternalError): the
 * failure is recorded from the stored status, nothing read again.
 */
export function planAbort(app: App, error: unknown): RunPlan {
  const stop: Stop = { failure: abortFailure(error), stored: true };
  return { lease: false, render: "none", found: {}, stop, dns: false, notify: notifies(app) };
}

/** The failure of an error no step expected (ApiFailed for the Kubernetes API, else InternalError). */
export function abortFailure(error: unknown): Failure {
  return {
    reason: error instanceof KubeApiError ? FailureReason.ApiFailed : FailureReason.InternalError,
    message: error instanceof Error ? error.message : String(error),
    stalled: false,
    transient: true,
  };
}

/**
 * The plan of a run over an App being deleted that still has plumb's finalizer: under the Lease,
 * prune its inventory — unless its spec says syncPolicy.prune: false (an invalid spec prunes,
 * the default) — then remove the finalizer.
 */
export function planFinalize(app: App): RunPlan {
  const spec = validateSpec(app.spec);
  return {
    lease: true,
    render: "none",
    found: {},
    finalize: { prune: spec.ok ? spec.value.syncPolicy.prune : true },
    dns: false,
    notify: notifies(app),
  };
}
