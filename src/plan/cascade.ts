// Deletions that take other objects with them: a Namespace deletes everything in it, a
// CustomResourceDefinition every custom resource of its kind. Pure.
import { LABEL_APP, LABEL_APP_NAMESPACE } from "../app/index.ts";
import {
  describeRef,
  groupOf,
  type KubeObject,
  type NamespacedName,
  type ObjectRef,
  refKey,
  refOf,
} from "../core/index.ts";

/** Objects the control plane puts in every Namespace (root-ca-cert-publisher, serviceaccount controller). */
const NAMESPACE_DEFAULTS = new Set(["/ConfigMap/kube-root-ca.crt", "/ServiceAccount/default"]);
/** How many foreign objects a message names. */
const NAMED = 5;

/** What the deletion of `ref` cascades to, by its kind: "namespace", "crd", or undefined. */
export function cascadeOf(ref: ObjectRef): "namespace" | "crd" | undefined {
  const gk = `${groupOf(ref.apiVersion)}/${ref.kind}`;
  if (gk === "/Namespace") return "namespace";
  if (gk === "apiextensions.k8s.io/CustomResourceDefinition") return "crd";
  return undefined;
}

export interface CascadeInput {
  /** What the deletion would take with it: a Namespace's objects, a CRD's custom resources. */
  contents: readonly KubeObject[];
  /** The App pruning. */
  app: NamespacedName;
  /** refKeys of the App's inventory. */
  inventory: ReadonlySet<string>;
}

/**
 * The objects of `contents` that are not the App's — what pruning would delete of others'
 *. The App's are: those labelled as its (plumb.dev/app and
 * plumb.dev/app-namespace, which Endpoints and EndpointSlices copy from their Service), those
 * in its inventory, and those owned, through ownerReferences at any depth, by one of those
 * (a Deployment's ReplicaSets and Pods). The control plane's defaults in every Namespace
 * (ConfigMap kube-root-ca.crt, ServiceAccount default) belong to the Namespace itself.
 */
export function foreignContents(input: CascadeInput): KubeObject[] {
  const byUid = new Map<string, KubeObject>();
  for (const o of input.contents) if (o.metadata.uid) byUid.set(o.metadata.uid, o);
  const verdict = new Map<KubeObject, boolean>();
  const isOurs = (o: KubeObject, depth: number): boolean => {
    const known = verdict.get(o);
    if (known !== undefined) return known;
    verdict.set(o, false); // an ownership cycle is no proof
    const labels = o.metadata.labels ?? {};
    const ours =
      (labels[LABEL_APP] === input.app.name &&
        labels[LABEL_APP_NAMESPACE] === input.app.namespace) ||
      input.inventory.has(refKey(refOf(o))) ||
      (depth < 10 &&
        (o.metadata.ownerReferences ?? []).some((owner) => {
          const uid = (owner as { uid?: unknown } | null)?.uid;
          const parent = typeof uid === "string" ? byUid.get(uid) : undefined;
          return parent !== undefined && isOurs(parent, depth + 1);
        }));
    verdict.set(o, ours);
    return ours;
  };
  return input.contents.filter(
    (o) =>
      !NAMESPACE_DEFAULTS.has(`${groupOf(o.apiVersion)}/${o.kind}/${o.metadata.name}`) &&
      !isOurs(o, 0),
  );
}

/**
 * Why `ref` is kept: "Namespace x is not pruned: deleting it would delete 2 objects that are
 * not this App's: ConfigMap x/a (App team-b/b), ConfigMap x/c"; at most NAMED named.
 */
export function cascadeReason(ref: ObjectRef, foreign: readonly KubeObject[]): string {
  const named = foreign.slice(0, NAMED).map((o) => {
    const labels = o.metadata.labels ?? {};
    const app = labels[LABEL_APP];
    const owner = app ? ` (App ${labels[LABEL_APP_NAMESPACE] ?? "?"}/${app})` : "";
    return `${describeRef(refOf(o))}${owner}`;
  });
  const more = foreign.length > NAMED ? `, and ${foreign.length - NAMED} more` : "";
  const what = foreign.length === 1 ? "1 object that is" : `${foreign.length} objects that are`;
  return `${describeRef(ref)} is not pruned: deleting it would delete ${what} not this App's: ${named.join(", ")}${more}`;
}
