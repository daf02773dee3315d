// Status composition: the App's status after a run, from what the steps recorded. Pure.
import type {
  AppStatus,
  ClusterRecord,
  DriftEntry,
  HealthStatus,
  InventoryEntry,
  ObjectRef,
  OperationState,
  ResourceStatus,
  SyncStatus,
} from "../app/index.ts";
import {
  ConditionReason,
  canonicalJson,
  type DnsReason,
  FailureReason,
  shortRevision,
} from "../core/index.ts";
import { type ConditionInput, setCondition } from "./conditions.ts";
import type { CorrectionRecord } from "./correction.ts";
import type { RunEvent } from "./events.ts";
import { steadyMessage } from "./messages.ts";
import type { WindowBlock } from "./windows.ts";

/** How many earlier applied revisions status keeps for rollback. */
export const REVISION_HISTORY = 10;

/** Why a run failed, for the Ready and Stalled conditions and the backoff. */
export interface Failure {
  reason: FailureReason;
  message: string;
  /** Retrying cannot help until the App's spec changes: Stalled=True. */
  stalled: boolean;
  /**
   * False when the cause will not pass by itself (credentials refused, a ref that does not
   * exist, a broken manifest): the schedule still retries, and the Stalled message says that
   * the source or its credentials must change. Undefined or true: a transient cause.
   */
  transient?: boolean;
}

/** What a run's steps found: the RunRecord without the run's own facts, plus its Events. */
export type RunOutcome = Omit<RunRecord, "now" | "generation" | "interval"> & {
  /** Events to emit on the App when the status changes. */
  events: RunEvent[];
  /** Objects selfHeal re-applied this run (announced as DriftCorrected). */
  driftCorrected?: number;
  /**
   * Inventory entries still on other clusters after this run; absent: those the
   * run started with (RunContext.departed).
   */
  departed?: InventoryEntry[];
};

export interface RunRecord {
  now: Date;
  generation: number | undefined;
  /** spec.interval (the schedule derives the next run from it and the App's uid). */
  interval: string;
  /** What the source names now (when it could be resolved). */
  observedRevision?: string;
  observedObjectHash?: string;
  /** The valuesFrom digest the run read (recorded with observedRevision; absent clears it). */
  observedValuesDigest?: string;
  /** Set when this run applied a revision. */
  /** Set when this run applied a revision; objectHash absent when some objects failed. */
  applied?: { revision: string; objectHash?: string };
  /** Set when this run staged a revision for approval; null clears a held one. */
  held?: { revision: string; objectHash: string } | null;
  /** Set when this run rejected the held revision; null clears a rejection. */
  rejected?: { revision: string; objectHash?: string } | null;
  /** The revision a Rollback moved away from and its render's objectHash; null clears it. */
  rolledBackFrom?: string | null;
  rolledBackFromObjectHash?: string | null;
  /** The objectHash of a render whose apply failed terminally (Stalled); null clears it. */
  failedObjectHash?: string | null;
  operationState?: OperationState;
  /** On the destination (stamped with its cluster by recordRun), then on other clusters. */
  inventory: InventoryEntry[];
  /** The remote clusters the inventory has entries on, with their Secrets. */
  clusters?: ClusterRecord[] | undefined;
  /** With `applied`: the applied render's pre-delete and post-delete hooks (status.deleteHooks). */
  deleteHooks?: ObjectRef[];
  resources: ResourceStatus[];
  health: { status: HealthStatus; reason: string };
  drift?: DriftEntry[];
  syncStatus: SyncStatus;
  /** A failed step. */
  failure?: Failure;
  /**
   * A sync window held a sync back this run: why (names the window), and when
   * automated sync may next run. Sets status.nextSyncWindow and brings the next run forward.
   */
  syncWindow?: Pick<WindowBlock, "message" | "next" | "nextMessage">;
  url?: string;
  /** What selfHeal re-applied this run (status.lastDriftCorrection). */
  corrected?: CorrectionRecord;
  /** spec.freeze held everything back this run: Ready's reason is Frozen. */
  frozen?: true;
  /** The DNSRecords condition, when this run reconciled the App's DNS records. */
  dns?: { status: "True" | "False"; reason: DnsReason; message: string };
}

/**
 * The new status. Conditions follow Flux's kstatus-compatible triple:
 * Ready (True when the run succeeded and nothing is unhealthy), Reconciling (True while
 * objects are Progressing), Stalled (True when retrying cannot help until the spec changes).
 * previousRevisions is newest first, at most REVISION_HISTORY. `failures` counts
 * consecutive failed runs: with lastReconciledAt (the time of the run) it drives the backoff
 * (plan/schedule.ts). Nothing about the next run is stored: the schedule derives it,
 * so a run that finds nothing new composes the status it started with.
 */
export function composeStatus(prev: AppStatus, recorded: RunRecord): AppStatus {
  const run = withSteadyMessages(prev, recorded);
  const status: AppStatus = { ...prev };
  const set = <K extends keyof AppStatus>(key: K, value: AppStatus[K] | undefined) => {
    if (value === undefined) delete status[key];
    else status[key] = value;
  };
  set("observedGeneration", run.generation);
  // kubectl get apps shows it (printer columns take JSONPath only, no substring).
  if (prev.revision) set("shortRevision", shortRevision(prev.revision));
  set("syncStatus", run.syncStatus);
  set("healthStatus", run.health.status);
  set("healthReason", run.health.reason || undefined);
  if (run.observedRevision !== undefined) {
    set("observedRevision", run.observedRevision);
    set("observedValuesDigest", run.observedValuesDigest);
  }
  if (run.observedObjectHash !== undefined) set("observedObjectHash", run.observedObjectHash);
  let held = run.held;
  if (run.applied) {
    if (prev.revision && prev.revision !== run.applied.revision) {
      const history = [
        {
          revision: prev.revision,
          deployedAt: prev.lastSyncedAt ?? run.now.toISOString(),
          ...(prev.objectHash ? { objectHash: prev.objectHash } : {}),
        },
        ...(prev.previousRevisions ?? []),
      ].filter((r) => r.revision !== run.applied?.revision);
      set("previousRevisions", dedupe(history).slice(0, REVISION_HISTORY));
    }
    set("revision", run.applied.revision);
    set("shortRevision", shortRevision(run.applied.revision));
    set("objectHash", run.applied.objectHash);
    set("lastSyncedAt", run.now.toISOString());
    if (run.deleteHooks !== undefined) {
      set("deleteHooks", run.deleteHooks.length > 0 ? run.deleteHooks : undefined);
    }
    if (prev.heldRevision === run.applied.revision) held = null;
  }
  if (held === null) {
    set("heldRevision", undefined);
    set("heldObjectHash", undefined);
  } else if (held) {
    set("heldRevision", held.revision);
    set("heldObjectHash", held.objectHash);
  }
  // A rejection stands until something is applied or another revision is rejected.
  if (run.rejected === null || (run.applied && run.rejected === undefined)) {
    set("rejectedRevision", undefined);
    set("rejectedObjectHash", undefined);
  } else if (run.rejected) {
    set("rejectedRevision", run.rejected.revision);
    set("rejectedObjectHash", run.rejected.objectHash);
    set("heldRevision", undefined);
    set("heldObjectHash", undefined);
  }
  if (run.rolledBackFrom === null) set("rolledBackFrom", undefined);
  else if (run.rolledBackFrom !== undefined) set("rolledBackFrom", run.rolledBackFrom);
  if (run.rolledBackFromObjectHash === null) set("rolledBackFromObjectHash", undefined);
  else if (run.rolledBackFromObjectHash !== undefined) {
    set("rolledBackFromObjectHash", run.rolledBackFromObjectHash);
  }
  if (run.failedObjectHash === null) set("failedObjectHash", undefined);
  else if (run.failedObjectHash !== undefined) set("failedObjectHash", run.failedObjectHash);
  if (run.operationState) set("operationState", run.operationState);
  set("inventory", run.inventory);
  set("clusters", run.clusters);
  set("resources", run.resources);
  set("drift", run.drift && run.drift.length > 0 ? run.drift : undefined);
  if (run.url !== undefined) set("url", run.url);
  if (run.corrected) set("lastDriftCorrection", { at: run.now.toISOString(), ...run.corrected });

  const failures = run.failure ? (prev.failures ?? 0) + 1 : 0;
  set("failures", failures > 0 ? failures : undefined);
  // Written by earlier versions; the schedule is derived now (a status that has it is rewritten
  // once without it).
  set("nextReconcileAt", undefined);
  // A held-back sync runs when its window opens (the tick reads it: plan/schedule.ts dueAt).
  set("nextSyncWindow", run.syncWindow?.next?.toISOString());
  set("nextSyncWindowMessage", run.syncWindow?.next ? undefined : run.syncWindow?.nextMessage);
  set("lastReconciledAt", run.now.toISOString());

  let conds = prev.conditions ?? [];
  for (const c of conditionsFor(run, prev)) {
    const before = prev.conditions?.find((p) => p.type === c.type)?.message;
    conds = setCondition(
      conds,
      { ...c, message: steadyMessage(before, c.message) },
      run.now,
      run.generation,
    );
  }
  if (run.dns)
    conds = setCondition(conds, { type: "DNSRecords", ...run.dns }, run.now, run.generation);
  set("conditions", conds);
  return status;
}

/**
 * `run` with the messages copied from objects made stable (plan/messages.ts): the
 * health reason and each resource line keep their previous text when the new one says the
 * same in another order, so an unchanged state composes an unchanged status.
 */
function withSteadyMessages(prev: AppStatus, run: RunRecord): RunRecord {
  const reason = run.health.reason ? steadyMessage(prev.healthReason, run.health.reason) : "";
  const before = new Map((prev.resources ?? []).map((r) => [resourceKey(r), r.message]));
  const resources = run.resources.map((r) =>
    r.message === undefined
      ? r
      : { ...r, message: steadyMessage(before.get(resourceKey(r)), r.message) },
  );
  return { ...run, health: { ...run.health, reason }, resources };
}

/** A resource line's identity and state: a message is kept only for the same object and state. */
function resourceKey(r: ResourceStatus): string {
  return JSON.stringify([
    r.apiVersion,
    r.kind,
    r.namespace ?? "",
    r.name,
    r.status,
    r.health ?? "",
  ]);
}

function conditionsFor(run: RunRecord, prev: AppStatus): ConditionInput[] {
  if (run.failure) {
    return [
      { type: "Ready", status: "False", reason: run.failure.reason, message: run.failure.message },
      {
        type: "Reconciling",
        status: "False",
        reason: run.failure.reason,
        message: run.failure.stalled ? "stalled" : "will retry",
      },
      {
        type: "Stalled",
        status: run.failure.stalled ? "True" : "False",
        reason: run.failure.stalled ? run.failure.reason : ConditionReason.Retrying,
        message: run.failure.stalled
          ? `${run.failure.message} (fix the spec to retry)`
          : run.failure.transient === false
            ? run.failure.reason === FailureReason.DestinationInvalid
              ? "retrying with backoff; the destination's kubeconfig Secret must change for it to succeed"
              : "retrying with backoff; the source or its credentials must change for it to succeed"
            : "transient; retrying with backoff",
      },
    ];
  }
  const notStalled: ConditionInput = {
    type: "Stalled",
    status: "False",
    reason: ConditionReason.Reconciled,
    message: "",
  };
  const { status: health, reason } = run.health;
  // A change a sync window holds back is said in Ready's message whatever the health.
  const held =
    run.syncWindow && run.syncStatus === "OutOfSync"
      ? heldByWindowMessage(run, prev, run.syncWindow.message)
      : undefined;
  const frozen = run.frozen ? frozenMessage(run, prev) : undefined;
  const withHeld = (message: string) =>
    [message, held, frozen].filter((m) => m !== undefined).join("; ");
  // While a window holds the sync, that is the reason whatever the health reads (an App that
  // never synced is Missing only because the window keeps it from applying).
  const heldOr = (other: string) => (held ? ConditionReason.OutsideSyncWindow : other);
  if (health === "Progressing") {
    return [
      {
        type: "Ready",
        status: "False",
        reason: heldOr(ConditionReason.Progressing),
        message: withHeld(reason),
      },
      {
        type: "Reconciling",
        status: "True",
        reason: ConditionReason.Progressing,
        message: reason,
      },
      notStalled,
    ];
  }
  // A held render whose objects do not exist yet is not ready: what it names is not there
  // until someone approves it.
  const awaiting = run.syncStatus === "Held" && health === "Missing";
  const ready: ConditionInput = awaiting
    ? {
        type: "Ready",
        status: "False",
        reason: ConditionReason.Held,
        message: heldMessage(run, prev),
      }
    : health === "Degraded" || health === "Missing"
      ? { type: "Ready", status: "False", reason: heldOr(health), message: withHeld(reason) }
      : frozen
        ? {
            type: "Ready",
            status: "True",
            reason: ConditionReason.Frozen,
            message: `${frozen}; ${reason}`,
          }
        : held
          ? {
              type: "Ready",
              status: "True",
              reason: ConditionReason.OutsideSyncWindow,
              message: held,
            }
          : { type: "Ready", status: "True", reason: run.syncStatus, message: readyMessage(run) };
  return [
    ready,
    { type: "Reconciling", status: "False", reason: ConditionReason.Reconciled, message: "" },
    notStalled,
  ];
}

/**
 * What spec.freeze holds back, for Ready's message: the revision that waits (or the drift
 * left uncorrected), e.g. "frozen (spec.freeze): revision abc… is not applied (applied: def…)".
 */
function frozenMessage(run: RunRecord, prev: AppStatus): string {
  const head = run.observedRevision ?? prev.revision ?? "";
  const applied = prev.revision ?? "";
  const sameRender =
    run.observedObjectHash === undefined || prev.objectHash === run.observedObjectHash;
  let what: string;
  if (applied === "") what = `revision ${head} is not applied (nothing applied yet)`;
  else if (run.syncStatus === "Synced") {
    what = `revision ${applied} is applied; nothing new is applied while frozen`;
  } else if (run.drift && run.drift.length > 0 && applied === head && sameRender) {
    what = `${run.drift.length} drifted object(s) are not corrected (see status.drift)`;
  } else if (applied === head) what = `the changed render of revision ${head} is not applied`;
  else what = `revision ${head} is not applied (applied: ${applied})`;
  return `frozen (spec.freeze): ${what}`;
}

/** Ready's message while a render is held and some of its objects do not exist yet. */
function heldMessage(run: RunRecord, prev: AppStatus): string {
  const rev = run.held?.revision ?? prev.heldRevision ?? run.observedRevision ?? "";
  return `revision ${rev} is held for approval; ${run.health.reason}`;
}

function readyMessage(run: RunRecord): string {
  const rev = run.applied?.revision ?? run.observedRevision ?? "";
  switch (run.syncStatus) {
    case "Synced":
      return `revision ${rev} is applied and ${run.health.status.toLowerCase()}`;
    case "Held":
      return `revision ${run.held?.revision ?? rev} is held for approval`;
    case "OutOfSync": {
      // What is not applied is the source's revision (a Rollback applied an older one).
      const head = run.observedRevision ?? rev;
      if (run.drift && run.drift.length > 0) {
        return `${run.drift.length} object(s) drifted from revision ${head}: see status.drift`;
      }
      return `revision ${head} is not applied${run.health.reason ? `; ${run.health.reason}` : ""}`;
    }
    default:
      return run.health.reason;
  }
}

/** Ready's message when a sync window holds the source's revision (or a drift fix) back. */
function heldByWindowMessage(run: RunRecord, prev: AppStatus, window: string): string {
  const head = run.observedRevision ?? "";
  const sameRender =
    run.observedObjectHash === undefined || prev.objectHash === run.observedObjectHash;
  let held = `revision ${head} is not applied`;
  if (prev.revision === head && !sameRender)
    held = `the changed render of revision ${head} is not applied`;
  if (prev.revision === head && sameRender) {
    held = `${run.drift?.length ?? 0} drifted object(s) are not corrected (see status.drift)`;
  }
  return `${held}: ${window}`;
}

function dedupe<T extends { revision: string }>(items: T[]): T[] {
  const seen = new Set<string>();
  return items.filter((i) => {
    if (seen.has(i.revision)) return false;
    seen.add(i.revision);
    return true;
  });
}

/**
 * True when `next` differs from `prev` in anything but the run's own time (lastReconciledAt).
 * A run that finds the same source, spec, objects and health writes nothing: the
 * schedule needs no write to advance.
 */
export function statusChanged(prev: AppStatus, next: AppStatus): boolean {
  const strip = ({ lastReconciledAt: _a, ...rest }: AppStatus) => rest;
  return canonicalJson(strip(prev)) !== canonicalJson(strip(next));
}
