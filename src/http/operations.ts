// Operations on an App as the API, the web page, Slack and the CLI request them: one set of
// rules for what may be asked now, one way to write spec.operation. No HTTP here.
import type { App, Operation } from "../app/index.ts";
import { EventReason, matchRevision, prefixHint, shortRevision } from "../core/index.ts";
import { syncBlocked } from "../plan/index.ts";
import { isFrozen, keyOf, requestedOperation, syncWindowsOf } from "./appview.ts";
import type { AppKey, AppStore } from "./types.ts";

const FROZEN = "App is frozen: operations are refused while spec.freeze is true";

/** Why an operation cannot be requested now; `status` is the HTTP status the API answers. */
export class OperationRefused extends Error {
  readonly status: 404 | 409;
  readonly details: Record<string, unknown>;
  constructor(status: 404 | 409, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = "OperationRefused";
    this.status = status;
    this.details = details;
  }
}

/** What a caller asks for. `revision`: Approve/Reject the held one; Rollback a previous one. */
export interface OperationRequest {
  type: Operation["type"];
  revision?: string | undefined;
}

/**
 * Checks `request` against the App as read now and builds the operation to write (pure).
 * Rules (409 OperationRefused otherwise), in this order:
 * - Approve, Reject: not frozen; something is held; `revision`, when given, names the held one
 *   (details `{heldRevision}`); then as below. The operation names the held revision.
 * - every type: not frozen; no earlier operation still pending (details `{pendingOperation}`).
 * - Rollback: `revision` (default: status.previousRevisions[0]) names one of previousRevisions
 *   (details `{previousRevisions}`); an ambiguous prefix is refused naming the matches.
 * - Sync, Deploy, Rollback, Approve: no sync window blocks a manual sync now (Argo
 *   CD's rule: unless the blocking windows have manualSync; details `{nextSyncWindow}`, when it
 *   may run). The reconcile applies the same rule to an operation written with kubectl.
 * A revision is named by itself, its short form or an unambiguous prefix of 7+ hex characters
 * (core's matchRevision: Slack and kubectl show 7); the operation carries the full revision.
 * @param requestedBy recorded in spec.operation and then status.operationState ("alice",
 *   "slack:U0123", "cli:bob"); never a secret
 * @param id the operation's id (a random UUID unless given)
 */
export function buildOperation(
  app: App,
  request: OperationRequest,
  requestedBy: string,
  now: Date,
  id: string = crypto.randomUUID(),
): Operation {
  let revision = request.revision;
  if (request.type === "Approve" || request.type === "Reject") {
    const held = app.status?.heldRevision;
    if (isFrozen(app)) throw new OperationRefused(409, FROZEN);
    if (!held) throw new OperationRefused(409, "nothing is held for approval");
    if (revision !== undefined) {
      const named = matchRevision(revision, [held]);
      if ("error" in named) {
        throw new OperationRefused(
          409,
          `stale revision: held is ${shortRevision(held)}, not ${JSON.stringify(revision)}${prefixHint(revision)}`,
          { heldRevision: held },
        );
      }
    }
    revision = held;
  }
  assertOperable(app);
  if (request.type === "Rollback") {
    const previous = (app.status?.previousRevisions ?? []).map((r) => r.revision);
    revision ??= previous[0];
    if (revision === undefined) {
      throw new OperationRefused(409, "nothing to roll back to: status.previousRevisions is empty");
    }
    const named = matchRevision(revision, previous, "status.previousRevisions");
    if ("error" in named) {
      throw new OperationRefused(409, named.error, {
        previousRevisions: previous,
      });
    }
    revision = named.revision;
  }
  if (request.type !== "Restart" && request.type !== "Reject") {
    const block = syncBlocked(syncWindowsOf(app), true, now);
    if (block) {
      throw new OperationRefused(409, block.message, {
        nextSyncWindow: block.next?.toISOString() ?? null,
        ...(block.nextMessage ? { nextSyncWindowMessage: block.nextMessage } : {}),
      });
    }
  }
  const op: Operation = { id, type: request.type, requestedBy, requestedAt: now.toISOString() };
  const named =
    request.type === "Approve" || request.type === "Reject" || request.type === "Rollback";
  if (named && revision !== undefined) op.revision = revision;
  return op;
}

/** 409 when the App is frozen or an earlier operation is still pending. */
function assertOperable(app: App): void {
  if (isFrozen(app)) throw new OperationRefused(409, FROZEN);
  const pending = requestedOperation(app);
  if (pending) {
    throw new OperationRefused(
      409,
      `operation ${pending.id ?? "?"} (${pending.type ?? "?"}) is still pending`,
      { pendingOperation: pending },
    );
  }
}

/** "Approve of <rev> requested by alice", "Rollback to <rev> ...", "Sync requested by alice". */
export function describeOperation(op: Operation): string {
  const who = op.requestedBy ?? "?";
  if (op.revision === undefined) return `${op.type} requested by ${who}`;
  const link = op.type === "Rollback" ? "to" : "of";
  return `${op.type} ${link} ${op.revision} requested by ${who}`;
}

/** Where a requested operation goes: the cluster, and optionally the scheduler and a log. */
export interface OperationSink {
  apps: Pick<AppStore, "setOperation" | "emitEvent">;
  /** Reconcile these Apps soon; absent (the CLI): the next scheduled run consumes it. */
  trigger?: (apps: AppKey[], reason: string) => Promise<void>;
  log?: (entry: Record<string, unknown>) => void;
}

/**
 * Writes `op` to spec.operation (resourceVersion precondition: a 409 KubeApiError when the App
 * changed since it was read), then, best effort (the operation is already recorded and the
 * scheduled run will consume it), emits a Normal Event "OperationRequested" and triggers a
 * reconcile with the reason "<via>: <type> requested by <who>".
 */
export async function submitOperation(
  sink: OperationSink,
  app: App,
  op: Operation,
  via: string,
): Promise<void> {
  await sink.apps.setOperation(app, { ...op });
  const message = describeOperation(op);
  try {
    await sink.apps.emitEvent(app, {
      type: "Normal",
      reason: EventReason.OperationRequested,
      message,
    });
  } catch (err) {
    sink.log?.({ msg: "emitting event failed", app: keyOf(app), error: String(err) });
  }
  if (!sink.trigger) return;
  const key = { namespace: app.metadata.namespace, name: app.metadata.name };
  try {
    await sink.trigger([key], `${via}: ${op.type} requested by ${op.requestedBy ?? "?"}`);
  } catch (err) {
    sink.log?.({ msg: "trigger failed", app: keyOf(app), error: String(err) });
  }
}
