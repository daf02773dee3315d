// Namespaces several Apps render: the tracking labels stay with the App that
// applied the Namespace first while it still renders it, so they do not flip to whichever App
// applied last. Pure.
import { LABEL_APP, LABEL_APP_NAMESPACE, trackingLabels } from "../app/index.ts";
import { type KubeObject, nameOf } from "../core/index.ts";

/**
 * The form of a Namespace to apply when other Apps (`claimants`, "namespace/name") render it
 * too: if the live Namespace's tracking labels name one of them, those labels are kept;
 * otherwise (no claimant labels it, or its owner let go) this App's labels stand. Other objects
 * and unshared Namespaces are returned as they are.
 */
export function sharedNamespaceForm(
  obj: KubeObject,
  live: KubeObject | undefined,
  claimants: readonly string[],
): KubeObject {
  if (obj.kind !== "Namespace" || claimants.length === 0 || !live) return obj;
  const labels = live.metadata.labels ?? {};
  const name = labels[LABEL_APP];
  const namespace = labels[LABEL_APP_NAMESPACE];
  if (name === undefined || namespace === undefined) return obj;
  if (!claimants.includes(nameOf({ namespace, name }))) return obj;
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      labels: { ...obj.metadata.labels, ...trackingLabels(namespace, name) },
    },
  };
}
