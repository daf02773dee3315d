// Adoption (spec.adopt): which live objects are someone else's, and the immutable fields a
// taken-over object keeps from its live state. Pure.
import { LABEL_APP, LABEL_APP_NAMESPACE } from "../app/index.ts";
import {
  canonicalJson,
  groupOf,
  isRecord,
  type KubeObject,
  type NamespacedName,
} from "../core/index.ts";

/** True when the live object carries App `app`'s tracking labels (plumb applied it for the App). */
export function labelledFor(live: KubeObject, app: NamespacedName): boolean {
  const labels = live.metadata.labels ?? {};
  return labels[LABEL_APP] === app.name && labels[LABEL_APP_NAMESPACE] === app.namespace;
}

/** Kinds whose spec.selector the API server refuses to change. */
const SELECTOR_IMMUTABLE = new Set([
  "apps/Deployment",
  "apps/StatefulSet",
  "apps/DaemonSet",
  "apps/ReplicaSet",
  "batch/Job",
]);

/**
 * `desired` with the live object's spec.selector when the kind's selector is immutable and the
 * two differ, and the pod template labelled with the live selector's matchLabels so it still
 * matches (kubectl and client-go refuse to change a selector; Argo CD and Helm fail on it). A
 * desired object without a selector, or a kind without one, comes back as it is.
 */
export function keepLiveSelector(desired: KubeObject, live: KubeObject): KubeObject {
  if (!SELECTOR_IMMUTABLE.has(`${groupOf(desired.apiVersion)}/${desired.kind}`)) return desired;
  const want = isRecord(desired["spec"]) ? desired["spec"] : undefined;
  const have = isRecord(live["spec"]) ? live["spec"] : undefined;
  if (!want?.["selector"] || !isRecord(have?.["selector"])) return desired;
  if (canonicalJson(want["selector"]) === canonicalJson(have["selector"])) return desired;
  const selector = structuredClone(have["selector"]) as Record<string, unknown>;
  const spec: Record<string, unknown> = { ...want, selector };
  const template = isRecord(want["template"]) ? want["template"] : undefined;
  const matchLabels = isRecord(selector["matchLabels"]) ? selector["matchLabels"] : {};
  if (template) {
    const metadata = isRecord(template["metadata"]) ? template["metadata"] : {};
    const labels = isRecord(metadata["labels"]) ? metadata["labels"] : {};
    spec["template"] = {
      ...template,
      metadata: { ...metadata, labels: { ...labels, ...matchLabels } },
    };
  }
  return { ...desired, spec };
}
