// Exact ownership: which objects other Apps own, from their inventories (one list of Apps, or
// the index the runs of one tick share).
import type { App, InventoryEntry } from "../app/index.ts";
import { nameOf, refKey } from "../core/index.ts";
import { dependencyRefs } from "../plan/index.ts";
import { listAppsOnce, type RunContext } from "./context.ts";
import type { InventoryIndex, KubePort } from "./ports.ts";

/**
 * refKey → "namespace/name" of every other App whose status.inventory lists the object on the
 * same cluster (sorted; several only for a Namespace, which Apps may share). `server` is an API
 * server URL, undefined for the cluster the Apps live in (Apps deploying the same names
 * to different clusters do not contend). Apps are told apart by uid, so a re-created App with the
 * same name is another App. With ports.inventories (a tick's shared index) the Apps
 * are listed once for all its runs.
 * `keys`: only these refKeys are looked up (the run's desired objects and inventory), so a run
 * costs its own objects, not every claim of the cluster: without it, a tick's first sync of N
 * Apps built N maps of all N Apps' objects. Without `keys`, every claimed refKey.
 */
export async function claimedByOthers(
  ctx: RunContext,
  server: string | undefined = ctx.destination?.server,
  keys?: Iterable<string>,
): Promise<Map<string, string[]>> {
  const apps = ctx.ports.inventories
    ? await ctx.ports.inventories.claims(ctx.ports.kube)
    : claimsOf(await listAppsOnce(ctx));
  const self = ctx.app.metadata.uid ?? nameOf(ctx.ref);
  const prefix = clusterPrefix(server);
  const owners = new Map<string, string[]>();
  const others = (claimants: ReadonlyArray<{ app: string; id: string }>) =>
    claimants
      .filter((c) => c.app !== self)
      .map((c) => c.id)
      .sort();
  if (keys === undefined) {
    for (const [key, claimants] of apps) {
      if (!key.startsWith(prefix)) continue;
      const names = others(claimants);
      if (names.length > 0) owners.set(key.slice(prefix.length), names);
    }
    return owners;
  }
  for (const key of keys) {
    const claimants = apps.get(prefix + key);
    if (!claimants || owners.has(key)) continue;
    const names = others(claimants);
    if (names.length > 0) owners.set(key, names);
  }
  return owners;
}

type Claims = Map<string, Array<{ app: string; id: string }>>;
/** uid (or namespace/name) of an App → the Claims keys its inventory added. */
type ClaimsByApp = Map<string, string[]>;

/** The key prefix of a cluster's objects in Claims: its API server URL ("" for the home one). */
function clusterPrefix(server: string | undefined): string {
  return `${server ?? ""}\u0000`;
}

/** cluster + refKey → the Apps (uid, or namespace/name without one) whose inventory lists it. */
function claimsOf(apps: readonly App[], byApp?: ClaimsByApp): Claims {
  const claims: Claims = new Map();
  for (const app of apps) add(claims, app, app.status?.inventory ?? [], byApp);
  return claims;
}

function add(
  claims: Claims,
  app: App,
  inventory: readonly InventoryEntry[],
  byApp?: ClaimsByApp,
): void {
  const id = nameOf(app.metadata);
  const self = app.metadata.uid ?? id;
  let mine = byApp?.get(self);
  if (byApp && !mine && inventory.length > 0) {
    mine = [];
    byApp.set(self, mine);
  }
  for (const ref of inventory) {
    const key = clusterPrefix(ref.cluster) + refKey(ref);
    const list = claims.get(key);
    if (list) list.push({ app: self, id });
    else claims.set(key, [{ app: self, id }]);
    mine?.push(key);
  }
}

/**
 * An index of the Apps' inventories shared by the runs of one tick (the first sync
 * of 1,000 Apps listed every App 1,000 times). The first run that needs it lists the Apps; each
 * sync records what its App owns now (record), so a later run of the same tick sees it. A claim
 * made meanwhile by another process is not seen — the objects it applied carry that App's
 * tracking labels, which refuse them (prepareTakeover) as before. A record costs the App's own
 * entries (the keys each App added are kept beside the claims), not a walk of every claim.
 */
export function createInventoryIndex(): InventoryIndex {
  // Only what is drawn from the list is kept (the claims, and the few Apps with dependsOn), not
  // the list itself: a tick over thousands of Apps would hold all their statuses.
  let loaded: Promise<{ claims: Claims; dependers: App[] }> | undefined;
  const byApp: ClaimsByApp = new Map();
  const pending: Array<[App, readonly InventoryEntry[]]> = [];
  const load = (kube: KubePort) => {
    loaded ??= kube.listApps().then((apps) => {
      const claims = claimsOf(apps, byApp);
      for (const [app, inventory] of pending.splice(0)) replace(claims, byApp, app, inventory);
      const dependers = apps.filter((a) => dependencyRefs(a.spec, a.metadata.namespace).length > 0);
      return { claims, dependers };
    });
    return loaded;
  };
  return {
    claims: (kube) => load(kube).then((x) => x.claims),
    dependers: (kube) => load(kube).then((x) => x.dependers),
    record(app, inventory) {
      if (!loaded) pending.push([app, inventory]);
      else void loaded.then((x) => replace(x.claims, byApp, app, inventory));
    },
  };
}

/** Drops `app`'s claims (the keys byApp holds for it) and adds `inventory` as its claims now. */
function replace(
  claims: Claims,
  byApp: ClaimsByApp,
  app: App,
  inventory: readonly InventoryEntry[],
): void {
  const self = app.metadata.uid ?? nameOf(app.metadata);
  for (const key of byApp.get(self) ?? []) {
    const list = claims.get(key);
    if (!list) continue;
    const rest = list.filter((c) => c.app !== self);
    if (rest.length === list.length) continue;
    if (rest.length > 0) claims.set(key, rest);
    else claims.delete(key);
  }
  byApp.delete(self);
  add(claims, app, inventory, byApp);
}
