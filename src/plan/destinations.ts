// Which cluster each inventory entry is on: the run works on the entries of its
// destination; entries on other clusters (a former destination) are carried until pruned. Pure.
import type { ClusterRecord, InventoryEntry, KubeconfigSecretRef } from "../app/index.ts";

/** Where a run's objects go: undefined for the App's own cluster, else the remote one. */
export interface DestinationRecord {
  server: string;
  secretRef: KubeconfigSecretRef;
}

/**
 * Splits status.inventory by cluster: the entries on `server` (undefined: the App's own
 * cluster), without their `cluster` field (their other fields, such as the applied hash, kept),
 * and the entries on any other cluster, as stored.
 */
export function splitInventory(
  inventory: readonly InventoryEntry[],
  server: string | undefined,
): { here: InventoryEntry[]; elsewhere: InventoryEntry[] } {
  const here: InventoryEntry[] = [];
  const elsewhere: InventoryEntry[] = [];
  for (const entry of inventory) {
    if (entry.cluster === server) {
      const { cluster: _c, ...ref } = entry;
      here.push(ref);
    } else elsewhere.push(entry);
  }
  return { here, elsewhere };
}

/**
 * The inventory to store: the run's entries on its destination (stamped with `server`, none
 * for the App's own cluster), then the entries still on other clusters.
 */
export function placeInventory(
  here: readonly InventoryEntry[],
  server: string | undefined,
  elsewhere: readonly InventoryEntry[],
): InventoryEntry[] {
  const placed = here.map((ref) => {
    const { cluster: _c, ...plain } = ref;
    return server === undefined ? plain : { ...plain, cluster: server };
  });
  return [...placed, ...elsewhere];
}

/**
 * status.clusters: for every remote cluster the inventory has entries on, the Secret that
 * reaches it — the destination's own for its server, else the record kept from before (a
 * former destination still holding objects). Sorted by server; undefined when none.
 */
export function clusterRecords(
  inventory: readonly InventoryEntry[],
  destination: DestinationRecord | undefined,
  previous: readonly ClusterRecord[] | undefined,
): ClusterRecord[] | undefined {
  const servers = new Set(inventory.flatMap((e) => (e.cluster === undefined ? [] : [e.cluster])));
  const out: ClusterRecord[] = [];
  for (const server of [...servers].sort()) {
    if (destination?.server === server) {
      out.push({ server, secretRef: destination.secretRef });
      continue;
    }
    const kept = previous?.find((c) => c.server === server);
    if (kept) out.push(kept);
  }
  return out.length > 0 ? out : undefined;
}
