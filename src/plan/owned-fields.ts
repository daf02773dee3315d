// The values of the fields plumb owns, as the API server stores them, hashed: recorded after
// each apply (status.inventory[].owned) so a later run can tell whether anyone wrote them since
// without asking the server. Pure (Web Crypto only).
import { FIELD_MANAGER, type InventoryEntry } from "../app/index.ts";
import { canonicalJson, hashObjects, isRecord, type KubeObject, refKey } from "../core/index.ts";
import type { LastApplied } from "./drift.ts";

/**
 * Hash of `live` restricted to the field set of plumb's own Apply entry in its managedFields
 * (main resource; subresource entries left out): for each path in that FieldsV1 set, the live
 * value there, or that it is absent. Equal hashes mean every field plumb owns holds the value
 * it held when the hash was taken; a write under plumb's field manager (an older run's apply
 * landing late) changes it, as do a change of the set itself (a field taken over or dropped).
 * Status and fields of other managers are not in it: a controller's writes leave it alone.
 * FieldsV1 keys: "f:<field>", "k:<merge keys as JSON>", "v:<set value as JSON>", "i:<index>"
 * (sigs.k8s.io/structured-merge-diff fieldpath/serialize-pe.go).
 * @returns 16 hex characters (hashObjects), or undefined when plumb has no Apply entry
 */
export async function ownedFieldsHash(live: KubeObject): Promise<string | undefined> {
  const mine = (live.metadata.managedFields ?? []).filter(
    (m) => m.manager === FIELD_MANAGER && m.operation === "Apply" && !m.subresource,
  );
  if (mine.length === 0) return undefined;
  return hashObjects(mine.map((m) => [m.apiVersion ?? "", project(m.fieldsV1 ?? {}, live)]));
}

/** Absent and present leaves, and inner nodes, never read alike. */
const ABSENT = ["absent"];
const leafOf = (value: unknown) => ["=", value];

function project(fields: Record<string, unknown>, live: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(fields)) {
    if (key === ".") continue;
    let value: unknown;
    if (key.startsWith("f:")) {
      value = isRecord(live) ? live[key.slice(2)] : undefined;
    } else if (key.startsWith("k:")) {
      const want = JSON.parse(key.slice(2)) as Record<string, unknown>;
      value = Array.isArray(live)
        ? live.find(
            (item) =>
              isRecord(item) &&
              Object.entries(want).every(([k, v]) => canonicalJson(item[k]) === canonicalJson(v)),
          )
        : undefined;
    } else if (key.startsWith("v:")) {
      const want = canonicalJson(JSON.parse(key.slice(2)));
      const has = Array.isArray(live) && live.some((item) => canonicalJson(item) === want);
      out[key] = has ? leafOf(true) : ABSENT;
      continue;
    } else if (key.startsWith("i:")) {
      value = Array.isArray(live) ? live[Number(key.slice(2))] : undefined;
    } else {
      continue;
    }
    const inner = isRecord(child) ? child : {};
    const leaf = Object.keys(inner).every((k) => k === ".");
    out[key] = value === undefined ? ABSENT : leaf ? leafOf(value) : project(inner, value);
  }
  return out;
}

/**
 * What the inventory recalls of each object whose rendered form is the one last applied
 * (`applied`, from appliedForms), by refKey: its `owned` hash, for suspect.
 */
export function lastApplied(
  inventory: readonly InventoryEntry[],
  applied: ReadonlySet<string>,
): Map<string, LastApplied> {
  const out = new Map<string, LastApplied>();
  for (const entry of inventory) {
    const key = refKey(entry);
    if (applied.has(key)) out.set(key, entry.owned === undefined ? {} : { owned: entry.owned });
  }
  return out;
}

/**
 * The inventory with `owned` set from the live object for each refKey in `confirmed` (objects
 * in the form last applied that the comparison found equal to the desired state, or that
 * plumb has just re-applied — `live` then being what the apply returned): their owned fields
 * hold plumb's values now, so the next run needs no dry run to tell. Other entries unchanged.
 */
export async function confirmOwned(
  inventory: readonly InventoryEntry[],
  confirmed: ReadonlySet<string>,
  live: ReadonlyMap<string, KubeObject>,
): Promise<InventoryEntry[]> {
  const out: InventoryEntry[] = [];
  for (const entry of inventory) {
    const key = refKey(entry);
    const obj = confirmed.has(key) ? live.get(key) : undefined;
    const owned = obj && (await ownedFieldsHash(obj));
    out.push(owned === undefined || owned === entry.owned ? entry : { ...entry, owned });
  }
  return out;
}
