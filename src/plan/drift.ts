// Drift: desired vs live, field by field, with the field manager that owns each drifted value.
import { FIELD_MANAGER } from "../app/index.ts";
import { canonicalJson, isRecord, type KubeObject } from "../core/index.ts";

export interface DriftedField {
  /** Readable path: "spec.template.spec.containers[name=web].image". */
  path: string;
  desired?: string;
  live?: string;
  /** The field manager owning the live value, when one does. */
  manager?: string;
}

interface Leaf {
  path: string;
  /** fieldsV1 keys of the path: ["f:spec", "f:template", ..., 'k:{"name":"web"}', "f:image"]. */
  keys: string[];
  desired: unknown;
  live: unknown;
  liveFound: boolean;
}

/**
 * Fields of `desired` whose live value differs and is not owned by plumb's field manager.
 * A value that differs but is still owned by `plumb` is the API server's normalization
 * (quantities "0.5" → "500m", defaulted list items) and not drift: server-side apply moves
 * a field's ownership to whoever changes it (kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts).
 * Lists whose items all have a `name` are matched by name (the merge key of containers,
 * env, volumes, ports); other lists compare whole. `status` and metadata other than labels
 * and annotations are ignored, and so are desired nulls and a Secret's write-only stringData.
 * Values of a v1 Secret are never reported (path and manager only). Pure.
 */
export function detectDrift(desired: KubeObject, live: KubeObject): DriftedField[] {
  const leaves: Leaf[] = [];
  const { status: _s, metadata, ...body } = desired;
  const meta = { labels: metadata.labels, annotations: metadata.annotations };
  walk({ metadata: meta, ...body }, live as unknown, "", [], true, leaves);
  const owners = (live.metadata.managedFields ?? []).filter(
    (m) => m.subresource === undefined || m.subresource === "",
  );
  const out: DriftedField[] = [];
  for (const leaf of leaves) {
    // null in a manifest means "unset" (creationTimestamp: null from kubectl --dry-run).
    if (leaf.desired === null) continue;
    // stringData is write-only: the API server folds it into data.
    if (desired.kind === "Secret" && leaf.path.startsWith("stringData.")) continue;
    if (leaf.liveFound && canonicalJson(leaf.desired) === canonicalJson(leaf.live)) continue;
    const manager = owners.find((m) => hasPath(m.fieldsV1, leaf.keys))?.manager;
    // Still plumb's and present: the API server normalized it. Gone is drift whoever owns it.
    if (manager === FIELD_MANAGER && leaf.liveFound) continue;
    // A Secret's values never leave the cluster: report the path and the manager only.
    const secret = desired.kind === "Secret" && desired.apiVersion === "v1";
    const field: DriftedField = { path: leaf.path };
    if (!secret) field.desired = show(leaf.desired);
    if (leaf.liveFound && !secret) field.live = show(leaf.live);
    if (manager !== undefined && manager !== FIELD_MANAGER) field.manager = manager;
    out.push(field);
  }
  return out;
}

/**
 * Paths of `desired`'s fields whose value would change if it were applied: the result of a
 * server-side dry-run apply (`dryRun`) compared with the live object, field by field along
 * the desired object's own fields (same path syntax as {@link detectDrift}). Unlike drift, it
 * does not matter who owns a field: this is the approval preview (issue 16), where a field
 * plumb owns changes because the source changed it; comparing against the dry run (not the
 * manifest) leaves out the API server's normalization. Pure.
 */
export function changedFields(desired: KubeObject, dryRun: KubeObject, live: KubeObject): string[] {
  const { status: _s, metadata, ...body } = desired;
  const shape = {
    metadata: { labels: metadata.labels, annotations: metadata.annotations },
    ...body,
  };
  const after: Leaf[] = [];
  const before: Leaf[] = [];
  walk(shape, dryRun as unknown, "", [], true, after);
  walk(shape, live as unknown, "", [], true, before);
  const beforeByPath = new Map(before.map((l) => [l.path, l]));
  const out: string[] = [];
  for (const a of after) {
    if (a.desired === null) continue;
    if (desired.kind === "Secret" && a.path.startsWith("stringData.")) continue;
    const b = beforeByPath.get(a.path);
    const same =
      b !== undefined &&
      a.liveFound === b.liveFound &&
      canonicalJson(a.live) === canonicalJson(b.live);
    if (!same && !out.includes(a.path)) out.push(a.path);
  }
  for (const b of before) {
    if (!after.some((a) => a.path === b.path) && !out.includes(b.path)) out.push(b.path);
  }
  return out;
}

function walk(
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
      walk(
        v,
        lv,
        path ? `${path}.${k}` : k,
        [...keys, `f:${k}`],
        found && isRecord(l) && k in l,
        out,
      );
    }
    return;
  }
  if (
    Array.isArray(d) &&
    d.length > 0 &&
    d.every((i) => isRecord(i) && typeof i["name"] === "string")
  ) {
    const liveItems = Array.isArray(l) ? l.filter(isRecord) : [];
    for (const item of d as Record<string, unknown>[]) {
      const name = item["name"] as string;
      const li = liveItems.find((x) => x["name"] === name);
      const itemPath = `${path}[name=${name}]`;
      const itemKeys = [...keys, `k:${JSON.stringify({ name })}`];
      if (li === undefined) {
        // The whole item is gone (a container or env var removed): one entry, not one per field.
        out.push({
          path: itemPath,
          keys: itemKeys,
          desired: item,
          live: undefined,
          liveFound: false,
        });
        continue;
      }
      walk(item, li, itemPath, itemKeys, found, out);
    }
    return;
  }
  out.push({ path, keys, desired: d, live: l, liveFound: found });
}

function hasPath(fields: Record<string, unknown> | undefined, keys: readonly string[]): boolean {
  let node: unknown = fields;
  for (const key of keys) {
    if (!isRecord(node)) return false;
    if (key in node) {
      node = node[key];
      continue;
    }
    // A list item keyed by more than name (ports: containerPort+protocol) still matches by name.
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

function show(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
