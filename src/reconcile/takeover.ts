// Before the apply step applies: which desired objects already exist, and what to do about
// each — leave an apply-if-absent object that is there, refuse or adopt one another tool made,
// fill the generated values of a Secret being created.
import { FIELD_MANAGER, LABEL_APP, LABEL_APP_NAMESPACE } from "../app/index.ts";
import {
  describeRef,
  groupOf,
  hex,
  KubeApiError,
  type KubeObject,
  type ObjectRef,
  refKey,
  refOf,
} from "../core/index.ts";
import {
  applyOnlyIfAbsent,
  CLIENT_SIDE_MANAGERS,
  keepLiveSelector,
  labelledFor,
  otherManager,
  upgradeManagedFields,
  withGeneratedValues,
} from "../plan/index.ts";
import type { RunContext } from "./context.ts";

/** What to apply, and what not to, after looking at the live objects. */
export interface Takeover {
  /** Objects to apply: generated values filled, live selectors kept when adopting. */
  apply: KubeObject[];
  /** Apply-if-absent objects that exist: left as they are (live form, for health). */
  present: Map<string, KubeObject>;
  /** Objects refused, with the reason, by refKey. */
  refused: Map<string, string>;
  /** Objects another tool made whose fields moved to plumb this run. */
  adopted: ObjectRef[];
}

/** Kinds whose immutable selector an adopted object keeps (see keepLiveSelector). */
const SELECTOR_KINDS = new Set([
  "apps/Deployment",
  "apps/StatefulSet",
  "apps/DaemonSet",
  "apps/ReplicaSet",
  "batch/Job",
]);

/**
 * Reads the live form of each desired object that may exist without being this App's — one not
 * in the inventory, an apply-if-absent one, and with `adopt` every workload (its live
 * selector): one list per kind and namespace holding LIST_FROM or more of them, a GET for
 * each other (readLive) — and decides:
 * - apply-if-absent (plumb.dev/ssa: IfNotPresent, plumb.dev/generate) and present: not applied,
 *   whoever made it (a Secret of one's own replaces a generated one);
 * - labelled for another plumb App: refused, naming it (adopt does not take from another App);
 * - made by another tool (neither in the inventory nor labelled for this App): refused unless
 *   `adopt` — except an object made by hand with kubectl (otherManager: no other tool manages
 *   it), which is taken over without `adopt`, as Argo CD and Flux do; when taken over, the
 *   fields of the client-side managers (CLIENT_SIDE_MANAGERS) move to
 *   plumb's Apply entry first (upgradeManagedFields, one JSON patch: kubectl's and client-go's
 *   csaupgrade), so plumb's apply owns them and the next run sees no conflict or stale field;
 * - with `adopt`, an immutable selector that differs is kept from the live object;
 * - absent: a Secret's generated keys get fresh random values (32 bytes, hex) as it is created.
 * Namespaces are shared between Apps and never looked at. A kind the API server does not serve
 * yet (a CRD of the same render) means the object is absent. Another failed read, or a failed
 * patch, refuses the object with the API server's message.
 */
export async function prepareTakeover(
  ctx: RunContext,
  objects: readonly KubeObject[],
  adopt: boolean,
): Promise<Takeover> {
  const out: Takeover = { apply: [], present: new Map(), refused: new Map(), adopted: [] };
  const known = new Set(ctx.inventory.map(refKey));
  const looked = objects.filter((desired) => {
    const ref = refOf(desired);
    const ifAbsent = applyOnlyIfAbsent(desired);
    const workload = SELECTOR_KINDS.has(`${groupOf(ref.apiVersion)}/${ref.kind}`);
    return (
      desired.kind !== "Namespace" && (!known.has(refKey(ref)) || ifAbsent || (adopt && workload))
    );
  });
  const read = await readLive(ctx, looked.map(refOf));
  for (const desired of objects) {
    const ref = refOf(desired);
    const key = refKey(ref);
    const ifAbsent = applyOnlyIfAbsent(desired);
    const found = read.get(key);
    if (found instanceof Error) {
      out.refused.set(key, found.message);
      continue;
    }
    let live: KubeObject | undefined = found;
    if (live && ifAbsent) {
      ctx.ports.redactor?.addSecretsOf([live]);
      out.present.set(key, live);
      continue;
    }
    if (!live) {
      const created = withGeneratedValues(desired, randomHex);
      // Generated passwords never appear in a message, in any encoding.
      if (created !== desired) ctx.ports.redactor?.addSecretsOf([created]);
      out.apply.push(created);
      continue;
    }
    const owner = otherApp(live, ctx);
    if (owner) {
      out.refused.set(key, `${describeRef(ref)} belongs to App ${owner} (its tracking labels)`);
      continue;
    }
    if (!known.has(key) && !labelledFor(live, ctx.ref)) {
      const other = otherManager(
        live.metadata.managedFields,
        live.metadata.labels,
        live.metadata.annotations,
      );
      if (!adopt && other !== undefined) {
        out.refused.set(
          key,
          `${describeRef(ref)} exists and is managed by ${other}, not by this App; set spec.adopt: true to take it over`,
        );
        continue;
      }
      const taken = await takeOwnership(ctx, ref, live, adopt);
      if (typeof taken === "string") {
        out.refused.set(key, taken);
        continue;
      }
      live = taken;
      out.adopted.push(ref);
    }
    out.apply.push(adopt ? keepLiveSelector(desired, live) : desired);
  }
  return out;
}

/**
 * Desired objects of one kind in one namespace from which one list, rather than a GET each,
 * reads the live forms: a first sync of M objects of K kinds then costs K reads, not M.
 */
export const LIST_FROM = 2;

/**
 * The live form of each of `refs` (refKey → the object; absent: it does not exist; an Error:
 * why it could not be read). Refs of one apiVersion and kind in one namespace, LIST_FROM or
 * more, are read with one list of that namespace (every object of the kind there, as one
 * consistent snapshot); any other ref, and every Secret, with a GET. A kind not served yet (its CRD is in this
 * render, applied first) has no objects.
 */
async function readLive(
  ctx: RunContext,
  refs: readonly ObjectRef[],
): Promise<Map<string, KubeObject | Error | undefined>> {
  const out = new Map<string, KubeObject | Error | undefined>();
  const groups = new Map<string, ObjectRef[]>();
  for (const ref of refs) {
    // A list of Secrets would read every Secret of the namespace: each of the App's is read alone.
    if (!ref.namespace || (ref.kind === "Secret" && ref.apiVersion === "v1")) continue;
    const group = `${ref.apiVersion}\u0000${ref.kind}\u0000${ref.namespace}`;
    groups.set(group, [...(groups.get(group) ?? []), ref]);
  }
  const listed = new Set<string>();
  for (const group of groups.values()) {
    if (group.length < LIST_FROM) continue;
    const { apiVersion, kind, namespace } = group[0]!;
    let items: KubeObject[] | Error;
    try {
      items = await ctx.cluster.list(apiVersion, kind, "", namespace);
    } catch (e) {
      items = e instanceof KubeApiError && e.status === 404 ? [] : asError(e);
    }
    const byName = new Map(
      items instanceof Error ? [] : items.map((o) => [o.metadata.name, o] as const),
    );
    for (const ref of group) {
      out.set(refKey(ref), items instanceof Error ? items : byName.get(ref.name));
      listed.add(refKey(ref));
    }
  }
  for (const ref of refs) {
    const key = refKey(ref);
    if (listed.has(key)) continue;
    try {
      out.set(key, await ctx.cluster.get(ref));
    } catch (e) {
      out.set(key, e instanceof KubeApiError && e.status === 404 ? undefined : asError(e));
    }
  }
  return out;
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** spec.adopt of the run's App (its spec validated before any step that asks). */
export function adopting(ctx: RunContext): boolean {
  const spec = ctx.app.spec as { adopt?: unknown } | undefined;
  return spec?.adopt === true;
}

/** "namespace/name" of the other plumb App whose tracking labels the live object carries. */
function otherApp(live: KubeObject, ctx: RunContext): string | undefined {
  const labels = live.metadata.labels ?? {};
  const name = labels[LABEL_APP];
  const namespace = labels[LABEL_APP_NAMESPACE];
  if (name === undefined || namespace === undefined) return undefined;
  if (name === ctx.ref.name && namespace === ctx.ref.namespace) return undefined;
  return `${namespace}/${name}`;
}

/** 32 random bytes (Web Crypto) as 64 lower-case hex characters: a generated Secret value. */
function randomHex(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return hex(bytes);
}

/** Attempts at moving the client-side managers' fields to plumb (client-go's DefaultRetry: 5). */
const OWNERSHIP_ATTEMPTS = 5;

/**
 * Moves the fields of kubectl's client-side managers to plumb's field manager (a managedFields
 * patch with `live`'s resourceVersion as precondition). A 409 (a controller wrote the object in
 * between, e.g. a Deployment's status) reads the object again and tries again with what it
 * says now, as client-go's retry.RetryOnConflict does, up to OWNERSHIP_ATTEMPTS times; the
 * object read again is checked for ownership anew.
 * @returns the object as the API server stored it, or why it is refused
 */
async function takeOwnership(
  ctx: RunContext,
  ref: ObjectRef,
  first: KubeObject,
  adopt: boolean,
): Promise<KubeObject | string> {
  let live = first;
  for (let attempt = 1; ; attempt++) {
    const upgraded = upgradeManagedFields(
      live.metadata.managedFields,
      CLIENT_SIDE_MANAGERS,
      FIELD_MANAGER,
    );
    if (!upgraded) return live;
    try {
      return await ctx.cluster.patchManagedFields(
        ref,
        upgraded,
        live.metadata.resourceVersion ?? "",
      );
    } catch (e) {
      const conflict = e instanceof KubeApiError && e.status === 409;
      if (!conflict || attempt >= OWNERSHIP_ATTEMPTS) {
        return `adopting ${describeRef(ref)}: ${e instanceof Error ? e.message : String(e)}`;
      }
    }
    const again = await ctx.cluster.get(ref).catch((e: unknown) => e);
    if (!again || again instanceof Error) {
      return `adopting ${describeRef(ref)}: ${again instanceof Error ? again.message : "it was deleted meanwhile"}`;
    }
    live = again as KubeObject;
    const owner = otherApp(live, ctx);
    if (owner) return `${describeRef(ref)} belongs to App ${owner} (its tracking labels)`;
    const other = otherManager(
      live.metadata.managedFields,
      live.metadata.labels,
      live.metadata.annotations,
    );
    if (!adopt && other !== undefined) {
      return `${describeRef(ref)} exists and is managed by ${other}, not by this App; set spec.adopt: true to take it over`;
    }
  }
}
