// How a run ends when a step throws: start over, or record the failure (never nothing).
import { KubeApiError } from "../core/index.ts";
import type { RunOutcome } from "../plan/index.ts";
import type { RunContext } from "./context.ts";
import { abortedOutcome } from "./failed.ts";
import { isRestart } from "./lease.ts";
import { type RunLine, recordRun, StatusNotWrittenError } from "./record.ts";

/** A 409 from the API server: another writer changed the App; the run starts over. */
export function isConflict(e: unknown): boolean {
  return e instanceof KubeApiError && e.status === 409;
}

/**
 * True for an error a run records as its failure (abortedOutcome) rather than passing up:
 * not a reason to start over (a busy, lost or stale Lease, a 409), and not a status write
 * that already failed (StatusNotWrittenError: its Event is emitted).
 */
export function isRecordable(e: unknown): boolean {
  return !isRestart(e) && !isConflict(e) && !(e instanceof StatusNotWrittenError);
}

/** Where a step keeps the context it is in (a step may write status: trackInventory). */
export interface Cursor {
  ctx: RunContext;
}

/**
 * Runs `step` and records what it found, merged with `found` (what earlier steps observed);
 * when the step throws a recordable error, records that failure instead,
 * from the context the step had reached. When the status write itself fails for good, the
 * failure of that write is recorded instead, once (the status write retried).
 */
export async function settle(
  ctx: RunContext,
  interval: string,
  found: Partial<RunOutcome>,
  step: (cursor: Cursor) => Promise<RunOutcome>,
): Promise<RunLine> {
  const cursor: Cursor = { ctx };
  let outcome: RunOutcome;
  try {
    outcome = await step(cursor);
  } catch (e) {
    if (!isRecordable(e)) throw e;
    outcome = abortedOutcome(cursor.ctx, e);
  }
  try {
    return await recordRun(cursor.ctx, interval, { ...outcome, ...found });
  } catch (e) {
    if (!isRecordable(e)) throw e;
    return recordRun(cursor.ctx, interval, { ...abortedOutcome(cursor.ctx, e), ...found });
  }
}
