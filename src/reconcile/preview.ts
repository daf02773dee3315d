// The approval preview's "will change" fields (issue 16): what applying the held revision would
// change, asked of the API server by a server-side dry-run apply of each existing object.
import { type KubeObject, refKey, refOf } from "../core/index.ts";
import { changedFields, detectDrift } from "../plan/index.ts";
import type { RunContext } from "./context.ts";

/**
 * For each desired object that exists live: the paths a real apply would change
 * ({@link changedFields} of a dry-run apply against the live object). When the dry run fails
 * (a webhook refuses it, the API server is busy) the object falls back to the drift
 * comparison, which misses fields plumb already owns, and the failure is logged.
 * @returns refKey → changed paths (empty: unchanged)
 */
export async function previewChanges(
  ctx: RunContext,
  desired: readonly KubeObject[],
  live: ReadonlyMap<string, KubeObject>,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const want of desired) {
    const key = refKey(refOf(want));
    const have = live.get(key);
    if (!have) continue;
    try {
      const dryRun = await ctx.cluster.apply(want, { dryRun: true });
      out.set(key, changedFields(want, dryRun, have));
    } catch (err) {
      ctx.ports.log?.({
        app: ctx.id,
        msg: "preview dry run failed",
        object: key,
        error: String(err),
      });
      out.set(
        key,
        detectDrift(want, have).map((f) => f.path),
      );
    }
  }
  return out;
}
