// What approving a held revision will do, read back from status.resources (pure).
import type { FieldChange, ObjectRef, ResourceStatus } from "../app/index.ts";

/** The approval preview: objects to create, to change (which fields, with values), to prune. */
export interface Preview {
  create: ObjectRef[];
  change: Array<
    ObjectRef & {
      /** The changed field paths, in the order the message lists them. */
      fields: string[];
      /**
       * Each changed field with its live and desired value (status.resources[].changes; only
       * the path when the line has none: a status written before values were kept). A v1
       * Secret's values are never there (plan: serverDiff).
       */
      changes: FieldChange[];
    }
  >;
  prune: ObjectRef[];
  /** Objects the API server refused in the dry run: approving would fail on them. */
  fail: Array<ObjectRef & { message: string }>;
}

const CHANGE = "will change: ";
const FAIL = "will fail: ";

function refOnly(r: ResourceStatus): ObjectRef {
  const ref: ObjectRef = { apiVersion: r.apiVersion, kind: r.kind, name: r.name };
  if (r.namespace !== undefined) ref.namespace = r.namespace;
  return ref;
}

/**
 * The preview of a Held App from its status.resources, in their order. The loop writes one
 * message per resource while a revision is held (plan/compare.ts: "will be created",
 * "will change: <path>, <path>" with the fields' values in `changes`, "will fail: <message>",
 * "will be pruned"); other resources are unchanged and left out.
 */
export function previewOf(resources: readonly ResourceStatus[] | undefined): Preview {
  const preview: Preview = { create: [], change: [], prune: [], fail: [] };
  for (const r of resources ?? []) {
    const message = r.message ?? "";
    if (message === "will be created") preview.create.push(refOnly(r));
    else if (message === "will be pruned") preview.prune.push(refOnly(r));
    else if (message.startsWith(FAIL)) {
      preview.fail.push({ ...refOnly(r), message: message.slice(FAIL.length) });
    } else if (message.startsWith(CHANGE)) {
      const fields = message
        .slice(CHANGE.length)
        .split(", ")
        .filter((f) => f !== "");
      const changes = r.changes?.length ? r.changes : fields.map((path) => ({ path }));
      preview.change.push({ ...refOnly(r), fields, changes });
    }
  }
  return preview;
}

/** Shown for a value a change does not carry: a Secret's (never kept), or none at all. */
export const HIDDEN_VALUE = "(hidden)";
/** Shown for the live side of a field applying adds, and the desired side of one it removes. */
export const UNSET_VALUE = "(unset)";

/**
 * The live and desired value of a changed field as a person reads them: the values, or
 * UNSET_VALUE for a side that lacks the field, or HIDDEN_VALUE on both sides when the change
 * carries no value at all (a Secret's: plan/drift.ts never keeps them).
 */
export function changeValues(change: FieldChange): { live: string; desired: string } {
  if (change.live === undefined && change.desired === undefined) {
    return { live: HIDDEN_VALUE, desired: HIDDEN_VALUE };
  }
  return { live: change.live ?? UNSET_VALUE, desired: change.desired ?? UNSET_VALUE };
}
