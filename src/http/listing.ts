// The Apps a caller may see: all of them, or those in the token's namespaces only.
import type { App } from "../app/index.ts";
import { keyOf } from "./appview.ts";
import { type Caller, mayUse } from "./auth.ts";
import type { AppStore } from "./types.ts";

/**
 * Apps visible to `caller`, sorted by "namespace/name". A namespace-limited caller costs one
 * list per namespace (never a cluster-wide list); others one cluster-wide list.
 */
export async function appsVisibleTo(store: AppStore, caller: Caller): Promise<App[]> {
  const lists = caller.namespaces
    ? await Promise.all([...new Set(caller.namespaces)].map((ns) => store.listApps(ns)))
    : [await store.listApps()];
  return lists
    .flat()
    .filter((a) => mayUse(caller, a.metadata.namespace))
    .sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
}
