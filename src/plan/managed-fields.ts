// The client-side-apply → server-side-apply migration of managed fields, as kubectl and
// client-go do it (k8s.io/client-go/util/csaupgrade, UpgradeManagedFieldsPatch): the fields that
// earlier managers own with Update operations move to plumb's Apply entry, so plumb's next apply
// owns them all and removes the ones it no longer sets. Pure; one adapter call sends the result.
import { isRecord, type ManagedFieldsEntry } from "../core/index.ts";

/**
 * Field managers that deploy with Update operations (client-side apply, create, replace, edit),
 * whose fields an adoption (spec.adopt) moves to plumb: kubectl (its client-side apply, create,
 * replace, edit and patch, and the name older kubectl used), Argo CD's client-side sync, Helm 3,
 * and the entry the API server writes for objects made before managed fields existed. Cluster
 * controllers (kube-controller-manager, the scheduler, HPA...) are never among them: their
 * fields (a Deployment's revision annotation, a PVC's binding) must stay theirs.
 */
export const CLIENT_SIDE_MANAGERS: readonly string[] = [
  "kubectl-client-side-apply",
  "kubectl",
  "kubectl-create",
  "kubectl-replace",
  "kubectl-edit",
  "kubectl-patch",
  "argocd-controller",
  "helm",
  "before-first-apply",
];

/**
 * The managed fields of an object after moving the fields of each `csaManagers` entry (operation
 * Update, same subresource) into `ssaManager`'s Apply entry — client-go's csaupgrade, step for
 * step, managers taken in the order given:
 * 1. find ssaManager's Apply entry; without one, the first (most recent) Update entry of the
 *    CSA manager becomes it (renamed, operation Apply);
 * 2. union into it the fields of the first Update entry of the CSA manager with the same
 *    apiVersion (entries of other apiVersions are dropped unmerged, as client-go does);
 * 3. remove every Update entry of the CSA manager.
 * @param subresource the subresource of the entries to migrate ("" for the main resource)
 * @returns the new list, or undefined when nothing changes (nothing to send)
 */
export function upgradeManagedFields(
  entries: readonly ManagedFieldsEntry[] | undefined,
  csaManagers: Iterable<string>,
  ssaManager: string,
  subresource = "",
): ManagedFieldsEntry[] | undefined {
  if (!entries) return undefined;
  let fields: ManagedFieldsEntry[] = entries.map((e) => structuredClone(e));
  for (const csa of csaManagers) fields = upgradeOne(fields, csa, ssaManager, subresource);
  return JSON.stringify(fields) === JSON.stringify(entries) ? undefined : fields;
}

const sub = (e: ManagedFieldsEntry) => e.subresource ?? "";

function upgradeOne(
  entries: ManagedFieldsEntry[],
  csa: string,
  ssa: string,
  subresource: string,
): ManagedFieldsEntry[] {
  const isCsa = (e: ManagedFieldsEntry) =>
    e.manager === csa && e.operation === "Update" && sub(e) === subresource;
  let target = entries.findIndex(
    (e) => e.manager === ssa && e.operation === "Apply" && sub(e) === subresource,
  );
  if (target === -1) {
    target = entries.findIndex(isCsa);
    if (target === -1) return entries;
    entries[target] = { ...entries[target], operation: "Apply", manager: ssa };
  }
  const into = entries[target]!;
  const from = entries.find((e) => isCsa(e) && e.apiVersion === into.apiVersion);
  if (from) into.fieldsV1 = unionFields(into.fieldsV1 ?? {}, from.fieldsV1 ?? {});
  return entries.filter((e) => !isCsa(e));
}

/**
 * The union of two FieldsV1 tries ("f:spec": {"f:replicas": {}}, ".": {} marks a node itself):
 * every path in either. Pure.
 */
export function unionFields(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const mine = out[key];
    out[key] = isRecord(mine) && isRecord(value) ? unionFields(mine, value) : value;
  }
  return out;
}

/**
 * Field managers of a person at a terminal: kubectl's verbs (client-side apply, create,
 * replace, edit, patch, label, annotate, scale, set, rollout), the name older kubectl used, and
 * the entry the API server writes for objects made before managed fields existed.
 */
const BY_HAND = /^(kubectl(-[a-z-]+)?|before-first-apply)$/;

/** Labels and annotations by which other deployment tools mark what they manage. */
const OTHER_TOOL_MARKS: ReadonlyArray<{
  tool: string;
  where: "labels" | "annotations";
  key: string;
  value?: string;
}> = [
  { tool: "Helm", where: "labels", key: "app.kubernetes.io/managed-by", value: "Helm" },
  { tool: "Helm", where: "annotations", key: "meta.helm.sh/release-name" },
  { tool: "Argo CD", where: "annotations", key: "argocd.argoproj.io/tracking-id" },
  { tool: "Flux", where: "labels", key: "kustomize.toolkit.fluxcd.io/name" },
  { tool: "Flux", where: "labels", key: "helm.toolkit.fluxcd.io/name" },
];

/**
 * Who else manages a live object, or undefined when it was made and changed only by people
 * with kubectl: every field manager of the main resource is kubectl's (or there are none) and
 * no other deployment tool (Helm, Argo CD, Flux) marks it. Such an object has no owner to
 * fight, so plumb takes it over without `spec.adopt`, as Argo CD and Flux do, upgrading its
 * client-side fields to plumb's; an object another tool manages needs
 * `spec.adopt: true`. Returns e.g. `Helm (label app.kubernetes.io/managed-by)` or
 * `field manager "argocd-controller"`.
 */
export function otherManager(
  managedFields: readonly ManagedFieldsEntry[] | undefined,
  labels: Readonly<Record<string, string>> | undefined,
  annotations: Readonly<Record<string, string>> | undefined,
): string | undefined {
  for (const mark of OTHER_TOOL_MARKS) {
    const value = (mark.where === "labels" ? labels : annotations)?.[mark.key];
    if (value !== undefined && (mark.value === undefined || value === mark.value)) {
      return `${mark.tool} (${mark.where === "labels" ? "label" : "annotation"} ${mark.key})`;
    }
  }
  const other = (managedFields ?? []).find((e) => sub(e) === "" && !BY_HAND.test(e.manager ?? ""));
  return other ? `field manager "${other.manager ?? ""}"` : undefined;
}
