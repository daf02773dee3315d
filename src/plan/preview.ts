// What approving a held revision will do, read back from status.resources (pure).
import type { ObjectRef, ResourceStatus } from "../app/index.ts";

/** The approval preview: objects to create, to change (which fields), to prune. */
export interface Preview {
  create: ObjectRef[];
  change: Array<ObjectRef & { fields: string[] }>;
  prune: ObjectRef[];
}

const CHANGE = "will change: ";

function refOnly(r: ResourceStatus): ObjectRef {
  const ref: ObjectRef = { apiVersion: r.apiVersion, kind: r.kind, name: r.name };
  if (r.namespace !== undefined) ref.namespace = r.namespace;
  return ref;
}

/**
 * The preview of a Held App from its status.resources, in their order. The loop writes one
 * message per resource while a revision is held (src/reconcile: "will be created",
 * "will change: <path>, <path>", "will be pruned"); other resources are unchanged and left out.
 */
export function previewOf(resources: readonly ResourceStatus[] | undefined): Preview {
  const preview: Preview = { create: [], change: [], prune: [] };
  for (const r of resources ?? []) {
    const message = r.message ?? "";
    if (message === "will be created") preview.create.push(refOnly(r));
    else if (message === "will be pruned") preview.prune.push(refOnly(r));
    else if (message.startsWith(CHANGE)) {
      const fields = message
        .slice(CHANGE.length)
        .split(", ")
        .filter((f) => f !== "");
      preview.change.push({ ...refOnly(r), fields });
    }
  }
  return preview;
}
