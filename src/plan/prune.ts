// Prune plan: the set difference between the last inventory and the new desired set,
// filtered by ownership and the protected kinds.
import {
  ANNOTATION_PRUNE,
  LABEL_APP,
  LABEL_APP_NAMESPACE,
  type ObjectRef,
  PRUNE_DISABLED,
} from "../app/index.ts";
import { describeRef, groupOf, type KubeObject, refKey } from "../core/index.ts";
import { pruneDisabled } from "./apply-policy.ts";
import { podIsLive, podSpecUses, replicaSetIsLive, USED_BY_PODS } from "./in-use.ts";

/** Kinds never pruned unless the live object is annotated plumb.dev/prune: "true". */
const PROTECTED = new Set([
  "/Namespace",
  "/PersistentVolumeClaim",
  "apiextensions.k8s.io/CustomResourceDefinition",
]);

export interface PruneInput {
  /** status.inventory of the last run. */
  inventory: readonly ObjectRef[];
  /** Refs of the new desired set (successfully rendered). */
  desired: readonly ObjectRef[];
  /** Live objects carrying this App's tracking labels, by refKey. */
  live: ReadonlyMap<string, KubeObject>;
  /** refKeys in the inventory of any other App. */
  claimedByOthers: ReadonlySet<string>;
  /** The other Apps ("namespace/name") listing each claimed refKey, to name them. */
  claimants?: ReadonlyMap<string, readonly string[]>;
  app: { namespace: string; name: string };
}

export interface PruneSkip {
  ref: ObjectRef;
  reason: string;
  /** Keep it in the inventory (so a later run or the finalizer can still prune it). */
  keep: boolean;
  /** Kept because another App renders it too (its deletion would pull it from under them). */
  claimed?: boolean;
  /**
   * Worth a Warning Event: a delete refused because it would take others' objects with it
   * (cascade.ts), which the author must know about.
   */
  warn?: boolean;
  /**
   * Kept because live Pods, or a ReplicaSet that may still make them, use it (holdInUse): pruned
   * by a later run once the rollout that moved away from it has finished. RFC 3339 time the
   * prune was first held (status.inventory[].prunePending).
   */
  pendingSince?: string;
}

export interface PrunePlan {
  delete: ObjectRef[];
  skip: PruneSkip[];
}

/**
 * Plans the prune of what the last inventory has and the desired set lacks (Flux
 * kustomize-controller's inventory diff). Never deletes:
 * - an object another App's inventory also lists (dropped from ours: it is theirs now);
 * - an object whose live labels do not name this App (someone else's; dropped);
 * - an object annotated `plumb.dev/prune: disabled` (Flux's `kustomize.toolkit.fluxcd.io/prune:
 *   disabled`; orphaned and dropped, reported once), such as generated password Secrets;
 * - a Namespace, PVC or CRD unless annotated `plumb.dev/prune: "true"` (orphaned and dropped,
 *   reported once) — their deletion takes data or other objects with it.
 * An object absent from `live` is already gone and is dropped silently.
 * Pure; the loop deletes `delete` and keeps failed deletes in the inventory.
 */
export function planPrune(input: PruneInput): PrunePlan {
  const desired = new Set(input.desired.map(refKey));
  const plan: PrunePlan = { delete: [], skip: [] };
  for (const ref of input.inventory) {
    const key = refKey(ref);
    if (desired.has(key)) continue;
    if (input.claimedByOthers.has(key)) {
      const names = input.claimants?.get(key) ?? [];
      plan.skip.push({
        ref,
        reason:
          names.length > 0
            ? `kept ${describeRef(ref)}: also rendered by ${names.join(", ")}`
            : `${describeRef(ref)} is also rendered by another App`,
        keep: false,
        claimed: true,
      });
      continue;
    }
    const live = input.live.get(key);
    if (!live) continue;
    const labels = live.metadata.labels ?? {};
    if (
      labels[LABEL_APP] !== input.app.name ||
      labels[LABEL_APP_NAMESPACE] !== input.app.namespace
    ) {
      plan.skip.push({
        ref,
        reason: `${describeRef(ref)} is no longer labelled as this App's`,
        keep: false,
      });
      continue;
    }
    if (pruneDisabled(live)) {
      plan.skip.push({
        ref,
        reason: `${describeRef(ref)} is not pruned: annotated ${ANNOTATION_PRUNE}: ${PRUNE_DISABLED}`,
        keep: false,
      });
      continue;
    }
    if (
      PROTECTED.has(`${groupOf(ref.apiVersion)}/${ref.kind}`) &&
      live.metadata.annotations?.[ANNOTATION_PRUNE] !== "true"
    ) {
      plan.skip.push({
        ref,
        reason: `${describeRef(ref)} is not pruned: a ${ref.kind} is kept unless annotated ${ANNOTATION_PRUNE}: "true"`,
        keep: false,
      });
      continue;
    }
    plan.delete.push(ref);
  }
  return plan;
}

/** The live workload objects a prune of Pods' dependencies is checked against. */
export interface InUse {
  /** Pods of the namespaces of the objects planned for deletion (any labels). */
  pods: readonly KubeObject[];
  /** ReplicaSets of those namespaces (any labels). */
  replicaSets: readonly KubeObject[];
  /** Namespaces whose Pods or ReplicaSets could not be listed, with the error: nothing there is pruned. */
  unknown?: ReadonlyMap<string, string>;
}

/** At most this many users are named in a pending prune's reason. */
const NAMED_USERS = 3;

/**
 * `plan` with every ConfigMap, Secret, PersistentVolumeClaim or ServiceAccount of `plan.delete`
 * that a live Pod (podIsLive) or a ReplicaSet that may still make Pods (replicaSetIsLive) of its
 * namespace names (podSpecUses) moved to the skips, kept in the inventory and marked pending:
 * a configMapGenerator's old hash-suffixed ConfigMap is deleted only after the rollout to the
 * new one has finished, so an old Pod that restarts meanwhile still finds it (pruning it at once
 * leaves such a Pod in CreateContainerConfigError). Objects of a namespace whose Pods could not
 * be listed (`inUse.unknown`) are kept the same way. `since` holds the time each was first held
 * (refKey → RFC 3339, from the inventory), kept; new holds start at `now`. Any other object
 * stays in `delete`. Pure.
 */
export function holdInUse(
  plan: PrunePlan,
  inUse: InUse,
  since: ReadonlyMap<string, string>,
  now: Date,
): PrunePlan {
  const out: PrunePlan = { delete: [], skip: [...plan.skip] };
  const users = new Map<string, string[]>();
  const use = (namespace: string | undefined, spec: unknown, user: string) => {
    for (const name of podSpecUses(spec)) {
      const key = `${namespace ?? ""}/${name}`;
      users.set(key, [...(users.get(key) ?? []), user]);
    }
  };
  for (const pod of inUse.pods.filter(podIsLive)) {
    use(pod.metadata.namespace, pod["spec"], `Pod ${pod.metadata.name}`);
  }
  for (const rs of inUse.replicaSets.filter(replicaSetIsLive)) {
    const template = (rs["spec"] as { template?: { spec?: unknown } } | undefined)?.template;
    use(rs.metadata.namespace, template?.spec, `ReplicaSet ${rs.metadata.name}`);
  }
  for (const ref of plan.delete) {
    const core = groupOf(ref.apiVersion) === "" && USED_BY_PODS.has(ref.kind);
    const by = core ? users.get(`${ref.namespace ?? ""}/${ref.kind}/${ref.name}`) : undefined;
    const unknown = core ? inUse.unknown?.get(ref.namespace ?? "") : undefined;
    if (by === undefined && unknown === undefined) {
      out.delete.push(ref);
      continue;
    }
    const pendingSince = since.get(refKey(ref)) ?? now.toISOString();
    const names = [...new Set(by)].sort();
    const more = names.length > NAMED_USERS ? ` and ${names.length - NAMED_USERS} more` : "";
    const why =
      by !== undefined
        ? `is still used by ${names.slice(0, NAMED_USERS).join(", ")}${more}`
        : `may still be used: its namespace's Pods could not be listed (${unknown})`;
    out.skip.push({
      ref,
      reason: `pending prune since ${pendingSince}: ${describeRef(ref)} ${why}; pruned once the rollout that moved away from it has finished`,
      keep: true,
      pendingSince,
    });
  }
  return out;
}
