// spec.ignoreDifferences: fields plumb leaves as they are live. The desired form of an object
// that exists takes the live value of each ignored field it sets (or leaves the field out when
// it is not set live), so the comparison finds no difference there and the apply changes
// nothing there. Argo CD's ignoreDifferences with RespectIgnoreDifferences (argo-cd
// util/argo/normalizers/diff_normalizer.go: which objects match; controller/sync.go
// normalizeTargetResources: the live values copied into the applied target). Pure.
import type { IgnoreDifference } from "../app/index.ts";
import {
  canonicalJson,
  groupOf,
  isRecord,
  type KubeObject,
  type ManagedFieldsEntry,
} from "../core/index.ts";

/**
 * The entries of `rules` that match `obj`, as Argo CD matches them: group and kind are globs
 * (`*` any run of characters; an absent group is the core group ""), name and namespace exact
 * when given.
 */
export function ignoreRulesFor(
  rules: readonly IgnoreDifference[] | undefined,
  obj: KubeObject,
): IgnoreDifference[] {
  if (!rules || rules.length === 0) return [];
  const group = groupOf(obj.apiVersion);
  return rules.filter(
    (r) =>
      globMatch(r.group ?? "", group) &&
      globMatch(r.kind, obj.kind) &&
      (!r.name || r.name === obj.metadata.name) &&
      (!r.namespace || r.namespace === (obj.metadata.namespace ?? "")),
  );
}

/**
 * The form of `desired` to compare and apply while `live` exists: each field an entry of
 * `rules` ignores (a JSON Pointer, or a field a listed manager owns live) that `desired` sets
 * takes its live value, or is left out when it is not set live. Fields `desired` does not set
 * stay unset: plumb takes no field it did not manage. Status is never touched (it is not
 * applied). Returns `desired` itself when no rule matches; never throws on odd shapes (a
 * pointer that does not resolve is skipped).
 */
export function keepIgnoredLive(
  desired: KubeObject,
  live: KubeObject,
  rules: readonly IgnoreDifference[] | undefined,
): KubeObject {
  const matching = ignoreRulesFor(rules, desired);
  if (matching.length === 0) return desired;
  const out = structuredClone(desired) as KubeObject;
  for (const rule of matching) {
    for (const pointer of rule.jsonPointers ?? []) {
      const tokens = parsePointer(pointer);
      if (tokens.length === 0 || tokens[0] === "status") continue;
      keepLiveAt(out, live, tokens);
    }
    const managers = new Set(rule.managedFieldsManagers ?? []);
    if (managers.size === 0) continue;
    for (const entry of live.metadata.managedFields ?? []) {
      if (!managers.has(entry.manager ?? "") || entry.subresource === "status") continue;
      graftOwned(out, live, withoutStatus(entry));
    }
  }
  return out;
}

/** RFC 6901: "/a/b~1c/0" → ["a", "b/c", "0"]. */
export function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function globMatch(pattern: string, text: string): boolean {
  if (!pattern.includes("*") && !pattern.includes("?")) return pattern === text;
  const source = pattern
    .split("")
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`).test(text);
}

/** Steps one token into a map or a list (a decimal index); undefined when absent. */
function child(node: unknown, token: string): { found: boolean; value: unknown } {
  if (isRecord(node)) return { found: token in node, value: node[token] };
  if (Array.isArray(node) && /^(0|[1-9][0-9]*)$/.test(token)) {
    const i = Number(token);
    return { found: i < node.length, value: node[i] };
  }
  return { found: false, value: undefined };
}

/** Where `out` sets the field at `tokens`, it takes `live`'s value there, or loses it. */
function keepLiveAt(out: unknown, live: unknown, tokens: readonly string[]): void {
  let d: unknown = out;
  let l: unknown = live;
  let liveFound = true;
  for (const token of tokens.slice(0, -1)) {
    const dc = child(d, token);
    if (!dc.found) return; // desired does not set it: nothing to keep
    d = dc.value;
    const lc: { found: boolean; value: unknown } = liveFound
      ? child(l, token)
      : { found: false, value: undefined };
    liveFound = lc.found;
    l = lc.value;
  }
  const last = tokens.at(-1) as string;
  if (!child(d, last).found) return;
  const lv = liveFound ? child(l, last) : { found: false, value: undefined };
  if (isRecord(d)) {
    if (lv.found) d[last] = structuredClone(lv.value);
    else delete d[last];
  } else if (Array.isArray(d)) {
    if (lv.found) d[Number(last)] = structuredClone(lv.value);
    else d.splice(Number(last), 1);
  }
}

function withoutStatus(entry: ManagedFieldsEntry): Record<string, unknown> {
  const { "f:status": _status, ...fields } = entry.fieldsV1 ?? {};
  return fields;
}

/** True for a FieldsV1 node that names no child field: the whole value is owned. */
function isLeaf(fields: unknown): boolean {
  return !isRecord(fields) || Object.keys(fields).every((k) => k === ".");
}

/**
 * For each field the FieldsV1 set `fields` holds that `out` sets: the live value, or the field
 * left out when not live. Map keys ("f:") and list items by their keys ("k:"); set values ("v:")
 * and positional items ("i:") are whole values of a list the set owns, kept with that list.
 */
function graftOwned(out: unknown, live: unknown, fields: Record<string, unknown>): void {
  for (const [key, sub] of Object.entries(fields)) {
    if (key.startsWith("f:") && isRecord(out)) {
      const name = key.slice(2);
      if (!(name in out)) continue;
      const lv = isRecord(live) ? live[name] : undefined;
      const liveHas = isRecord(live) && name in live;
      if (isLeaf(sub)) {
        if (liveHas) out[name] = structuredClone(lv);
        else delete out[name];
      } else if (isRecord(sub)) graftOwned(out[name], lv, sub);
    } else if (key.startsWith("k:") && Array.isArray(out)) {
      let want: Record<string, unknown>;
      try {
        want = JSON.parse(key.slice(2)) as Record<string, unknown>;
      } catch {
        continue;
      }
      const matches = (item: unknown) =>
        isRecord(item) &&
        Object.entries(want).every(([k, v]) => canonicalJson(item[k]) === canonicalJson(v));
      const i = out.findIndex(matches);
      if (i < 0) continue;
      const li = Array.isArray(live) ? live.find(matches) : undefined;
      if (isLeaf(sub)) {
        if (li !== undefined) out[i] = structuredClone(li);
        else out.splice(i, 1);
      } else if (isRecord(sub)) graftOwned(out[i], li, sub);
    }
  }
}
