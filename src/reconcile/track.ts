// Before applying: track what the apply may create, so nothing it creates is ever orphaned.
import { type ObjectRef, refKey } from "../core/index.ts";
import { clusterRecords, dedupeRefs, placeInventory, splitInventory } from "../plan/index.ts";
import type { RunContext } from "./context.ts";
import { writeStatusChecked } from "./record.ts";

/**
 * Records in status.inventory, before anything is applied, the union of the stored inventory
 * and `toApply` — only when `toApply` adds objects, in one status write (conditional on the
 * run's resourceVersion, under its Lease). A run whose response was lost after the API server
 * created an object, or whose final status write failed, thus leaves that object in the
 * inventory, and the next run prunes it when the source dropped it (Flux
 * and Argo CD keep their inventories elsewhere, plumb's lives in status). The new entries are
 * placed on the run's destination, and status.objectHash is cleared (the applied
 * set is not known until the final write, which trims the inventory to what the run owns and
 * records the hash again). Cost: one status write per run that adds objects. The write is
 * exact (writeStatusChecked): landing on the resourceVersion the run read, it proves the App
 * unchanged under the Lease and stands for the re-read of it (takeLease, 2); a 409 from
 * another writer, or from this write landed with its answer lost, starts the run over.
 * @returns the context with the App as stored after the write (or `ctx` when nothing was added)
 */
export async function trackInventory(
  ctx: RunContext,
  toApply: readonly ObjectRef[],
): Promise<RunContext> {
  const stored = ctx.app.status ?? {};
  const server = ctx.destination?.server;
  const { here, elsewhere } = splitInventory(stored.inventory ?? [], server);
  const known = new Set(here.map(refKey));
  const added = toApply.filter((ref) => !known.has(refKey(ref)));
  if (added.length === 0) return ctx;
  const inventory = placeInventory(dedupeRefs([...here, ...added]), server, elsewhere);
  const clusters = clusterRecords(inventory, ctx.destination, stored.clusters);
  // Until the final write, what is live is no render's for sure: without status.objectHash
  // the next run applies (and prunes) whatever it renders, even a render equal to the last
  // one applied — otherwise the gates would leave a tracked object of a run that failed
  // after applying it in place, and say Synced.
  const { objectHash: _applied, ...rest } = stored;
  const status = { ...rest, inventory };
  if (clusters) status.clusters = clusters;
  const app = await writeStatusChecked(ctx, status, undefined, { exact: true });
  ctx.lease?.confirm();
  return { ...ctx, app };
}
