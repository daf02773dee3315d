// Desired versus live as the API server sees them. Two pure passes:
// `suspect` (no request) says whether an object may differ from what the server would store if
// plumb applied it; for a suspect the loop asks the server (a server-side-apply dry run) and
// `serverDiff` lists what applying would change, field by field, with the manager that owns
// each live value. The server decides normalisation: quantities ("1000m" is stored "1"), omitted
// zero values and empty lists, defaults, int-or-string.
import { FIELD_MANAGER } from "../app/index.ts";
import {
  canonicalJson,
  isRecord,
  type KubeObject,
  type ManagedFieldsEntry,
} from "../core/index.ts";
import { ownedFieldsHash } from "./owned-fields.ts";

export interface DriftedField {
  /** Readable path: "spec.template.spec.containers[name=web].image". */
  path: string;
  /** What applying would store (the dry run's value); absent when applying removes the field. */
  desired?: string;
  /** The live value; absent when the field is not set live. */
  live?: string;
  /** The field manager owning the live value, when one other than plumb does. */
  manager?: string;
}

interface Leaf {
  path: string;
  /** FieldsV1 keys of the path: ["f:spec", "f:template", ..., 'k:{"name":"web"}', "f:image"]. */
  keys: string[];
  desired: unknown;
  live: unknown;
  liveFound: boolean;
}

/** What a comparison leaves out: a Secret's values, and fields the caller ignores. */
export interface DiffOptions {
  /** Leaf paths never compared ("metadata.labels.plumb.dev/app" on a shared Namespace). */
  ignore?: (path: string) => boolean;
}

/** What the inventory recalls of plumb's last apply of an object whose rendered form is unchanged. */
export interface LastApplied {
  /**
   * ownedFieldsHash of the object as the API server stored it after that apply (or as a later
   * comparison found it equal to the desired state); absent in a status older than this record.
   */
  owned?: string | undefined;
}

/**
 * Whether `desired` may differ from what the API server would store if plumb applied it over
 * `live` — cheap and conservative (a false "yes" costs one dry run; a false "no" would hide a
 * change). Each field `desired` sets is compared with its live value:
 * - equal, or a desired null (kubectl's `creationTimestamp: null`), or an empty list or map the
 *   server omits: not a difference;
 * - different while the fields plumb owns still hold what plumb's last apply stored (`last`
 *   given: this very form is the one last applied, and `live`'s ownedFieldsHash is `last.owned`):
 *   the server's normalisation ("1000m" stored "1", a zero it omits). Ownership alone does not
 *   say so: an older run's apply that lands late (a slow link, a run past its Lease) writes an
 *   older revision's values under plumb's own field manager — values, not owners, decide;
 * - any other difference: suspect.
 * When the owned fields are not known to hold plumb's last apply, a field plumb owns live that
 * `desired` no longer sets is suspect too (applying would remove it: a key removed in Git, or
 * one an older revision's late write brought back). A Secret's stringData is write-only (folded
 * into data): compared only through `last`. A `last` without `owned` (an older status) trusts
 * plumb's ownership as before.
 */
export async function suspect(
  desired: KubeObject,
  live: KubeObject,
  last: LastApplied | undefined,
  options: DiffOptions = {},
): Promise<boolean> {
  const applied =
    last !== undefined &&
    (last.owned === undefined || last.owned === (await ownedFieldsHash(live)));
  const leaves: Leaf[] = [];
  walkDesired(body(desired), live as unknown, "", [], true, leaves);
  const owners = live.metadata.managedFields ?? [];
  for (const leaf of leaves) {
    if (leaf.desired === null || options.ignore?.(leaf.path)) continue;
    if (desired.kind === "Secret" && leaf.path.startsWith("stringData.")) {
      if (applied) continue;
      return true;
    }
    if (leaf.liveFound && canonicalJson(leaf.desired) === canonicalJson(leaf.live)) continue;
    if (!leaf.liveFound && isEmpty(leaf.desired)) continue;
    if (applied && ownersOf(owners, leaf.keys).includes(FIELD_MANAGER)) continue;
    return true;
  }
  if (!applied) {
    const mine = owners.find(
      (m) => m.manager === FIELD_MANAGER && m.operation === "Apply" && !m.subresource,
    );
    if (mine?.fieldsV1 && ownsUnset(mine.fieldsV1, body(desired))) return true;
  }
  return false;
}

/**
 * What applying would change: `dryRun` (the object a server-side-apply dry run of the desired
 * form returned) against `live`, field by field — labels, annotations and everything but
 * metadata and status. Lists whose items all have a `name` (containers, env, volumes, ports by
 * name) are matched by name and an item present on one side only is one entry; other lists
 * compare whole. Each entry names the manager owning the live value (other than plumb).
 * A v1 Secret's values are never reported: path and manager only.
 */
export function serverDiff(
  dryRun: KubeObject,
  live: KubeObject,
  options: DiffOptions = {},
): DriftedField[] {
  const leaves: Leaf[] = [];
  walkBoth(body(dryRun), body(live), "", [], leaves);
  const owners = live.metadata.managedFields ?? [];
  const secret = live.kind === "Secret" && live.apiVersion === "v1";
  const out: DriftedField[] = [];
  for (const leaf of leaves) {
    if (options.ignore?.(leaf.path)) continue;
    const field: DriftedField = { path: leaf.path };
    if (!secret && leaf.desired !== undefined) field.desired = show(leaf.desired);
    if (!secret && leaf.live !== undefined) field.live = show(leaf.live);
    const manager = ownersOf(owners, leaf.keys).find((m) => m !== FIELD_MANAGER);
    if (manager !== undefined && leaf.live !== undefined) field.manager = manager;
    out.push(field);
  }
  return out;
}

/** An object's comparable body: labels, annotations and all but metadata and status. */
function body(obj: KubeObject): Record<string, unknown> {
  const { status: _s, metadata, apiVersion: _a, kind: _k, ...rest } = obj;
  const meta: Record<string, unknown> = {};
  if (metadata.labels !== undefined) meta["labels"] = metadata.labels;
  if (metadata.annotations !== undefined) meta["annotations"] = metadata.annotations;
  return Object.keys(meta).length > 0 ? { metadata: meta, ...rest } : rest;
}

const isEmpty = (v: unknown) =>
  (Array.isArray(v) && v.length === 0) || (isRecord(v) && Object.keys(v).length === 0);

/** True when every item of both lists is an object with a string `name` (the merge key). */
function byName(...lists: unknown[][]): boolean {
  const items = lists.flat();
  return items.length > 0 && items.every((i) => isRecord(i) && typeof i["name"] === "string");
}

function walkDesired(
  d: unknown,
  l: unknown,
  path: string,
  keys: string[],
  found: boolean,
  out: Leaf[],
): void {
  if (isRecord(d)) {
    for (const [k, v] of Object.entries(d)) {
      if (v === undefined) continue;
      const lv = isRecord(l) ? l[k] : undefined;
      const here = found && isRecord(l) && k in l;
      walkDesired(v, lv, path ? `${path}.${k}` : k, [...keys, `f:${k}`], here, out);
    }
    return;
  }
  if (Array.isArray(d) && byName(d)) {
    const liveItems = Array.isArray(l) ? l.filter(isRecord) : [];
    for (const item of d as Record<string, unknown>[]) {
      const name = item["name"] as string;
      const li = liveItems.find((x) => x["name"] === name);
      const itemPath = `${path}[name=${name}]`;
      const itemKeys = [...keys, `k:${JSON.stringify({ name })}`];
      if (li === undefined) {
        out.push({
          path: itemPath,
          keys: itemKeys,
          desired: item,
          live: undefined,
          liveFound: false,
        });
        continue;
      }
      walkDesired(item, li, itemPath, itemKeys, found, out);
    }
    return;
  }
  out.push({ path, keys, desired: d, live: l, liveFound: found });
}

function walkBoth(d: unknown, l: unknown, path: string, keys: string[], out: Leaf[]): void {
  if (isRecord(d) && isRecord(l)) {
    for (const k of new Set([...Object.keys(d), ...Object.keys(l)])) {
      walkBoth(d[k], l[k], path ? `${path}.${k}` : k, [...keys, `f:${k}`], out);
    }
    return;
  }
  if (Array.isArray(d) && Array.isArray(l) && byName(d, l)) {
    const named = (xs: unknown[]) => new Map(xs.map((x) => [(x as { name: string }).name, x]));
    const [dn, ln] = [named(d), named(l)];
    for (const name of new Set([...dn.keys(), ...ln.keys()])) {
      const itemKeys = [...keys, `k:${JSON.stringify({ name })}`];
      const [di, li] = [dn.get(name), ln.get(name)];
      const itemPath = `${path}[name=${name}]`;
      if (di === undefined || li === undefined) {
        out.push({
          path: itemPath,
          keys: itemKeys,
          desired: di,
          live: li,
          liveFound: li !== undefined,
        });
      } else walkBoth(di, li, itemPath, itemKeys, out);
    }
    return;
  }
  if (canonicalJson(d) === canonicalJson(l)) return;
  out.push({ path, keys, desired: d, live: l, liveFound: l !== undefined });
}

/**
 * The managers whose field set holds the path `keys` (subresource entries included: an HPA or
 * `kubectl scale` owns spec.replicas through the scale subresource). A list item keyed by more
 * than its name (ports: containerPort and protocol) still matches by name.
 */
export function ownersOf(
  entries: readonly ManagedFieldsEntry[],
  keys: readonly string[],
): string[] {
  return entries.filter((m) => hasPath(m.fieldsV1, keys)).map((m) => m.manager ?? "");
}

function hasPath(fields: Record<string, unknown> | undefined, keys: readonly string[]): boolean {
  let node: unknown = fields;
  for (const key of keys) {
    if (!isRecord(node)) return false;
    if (key in node) {
      node = node[key];
      continue;
    }
    const name = key.startsWith("k:")
      ? (JSON.parse(key.slice(2)) as { name?: string }).name
      : undefined;
    const alt =
      name === undefined
        ? undefined
        : Object.keys(node).find(
            (k) => k.startsWith("k:") && k.includes(`"name":${JSON.stringify(name)}`),
          );
    if (alt === undefined) return false;
    node = node[alt];
  }
  return true;
}

/**
 * True when the FieldsV1 set `fields` holds a field `desired` does not set: a map key ("f:"),
 * a list item by its keys ("k:", the desired item matching every key field it sets, so a
 * defaulted key such as a port's protocol still matches) or a set value ("v:").
 */
function ownsUnset(fields: Record<string, unknown>, desired: unknown): boolean {
  for (const [key, child] of Object.entries(fields)) {
    if (key === ".") continue;
    let next: unknown;
    if (key.startsWith("f:")) {
      if (!isRecord(desired)) continue; // desired sets a value here: the value check decides
      const name = key.slice(2);
      if (!(name in desired) || desired[name] === null) return true;
      next = desired[name];
    } else if (key.startsWith("k:")) {
      if (!Array.isArray(desired)) continue;
      const want = JSON.parse(key.slice(2)) as Record<string, unknown>;
      next = desired.find(
        (item) =>
          isRecord(item) &&
          Object.entries(want).every(
            ([k, v]) => !(k in item) || canonicalJson(item[k]) === canonicalJson(v),
          ),
      );
      if (next === undefined) return true;
    } else if (key.startsWith("v:")) {
      if (!Array.isArray(desired)) continue;
      const value = key.slice(2);
      if (!desired.some((item) => canonicalJson(item) === value)) return true;
      continue;
    } else {
      continue; // "i:" (positional) and anything newer: leave it to the other checks
    }
    if (isRecord(child) && ownsUnset(child, next)) return true;
  }
  return false;
}

function show(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
