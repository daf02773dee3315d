// Exact ownership: which objects other Apps own, from their inventories (one list of Apps).
import { nameOf, refKey } from "../core/index.ts";
import type { RunContext } from "./context.ts";

/**
 * refKey → "namespace/name" of every other App whose status.inventory lists the object on the
 * same cluster (sorted; several only for a Namespace, which Apps may share). `server` is an API
 * server URL, undefined for the cluster the Apps live in (issue 15: Apps deploying the same names
 * to different clusters do not contend). Apps are told apart by uid, so a re-created App with the
 * same name is another App.
 */
export async function claimedByOthers(
  ctx: RunContext,
  server: string | undefined = ctx.destination?.server,
): Promise<Map<string, string[]>> {
  const owners = new Map<string, string[]>();
  for (const other of await ctx.ports.kube.listApps()) {
    if (other.metadata.uid === ctx.app.metadata.uid) continue;
    const id = nameOf(other.metadata);
    for (const ref of other.status?.inventory ?? []) {
      if (ref.cluster !== server) continue;
      const key = refKey(ref);
      owners.set(key, [...(owners.get(key) ?? []), id].sort());
    }
  }
  return owners;
}
