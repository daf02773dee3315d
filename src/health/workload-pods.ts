// A workload that is not progressing, explained by its Pods: "2 of 4 replicas
// updated" says nothing when the new Pods wait in ImagePullBackOff; the Pod's reason does. Pure.
import type { KubeObject } from "../core/index.ts";
import { podHealth } from "./pod.ts";
import { arr, type HealthResult, obj, plural, result, specOf, str } from "./util.ts";

/** Workload kinds (apps/v1) whose Pods explain a rollout that does not progress. */
export const POD_OWNERS: ReadonlySet<string> = new Set(["Deployment", "StatefulSet", "DaemonSet"]);

/**
 * The label selector of a workload's Pods in the API's query syntax (spec.selector:
 * matchLabels, and matchExpressions In, NotIn, Exists, DoesNotExist), or undefined when it has
 * none (a Pod list without a selector would be every Pod of the namespace).
 */
export function podSelector(workload: KubeObject): string | undefined {
  const selector = obj(specOf(workload)["selector"]);
  const parts: string[] = [];
  for (const [k, v] of Object.entries(obj(selector["matchLabels"]))) {
    if (typeof v === "string") parts.push(`${k}=${v}`);
  }
  for (const e of arr(selector["matchExpressions"])) {
    const { key, operator, values } = obj(e) as {
      key?: unknown;
      operator?: unknown;
      values?: unknown;
    };
    if (typeof key !== "string") continue;
    const list = arr(values).filter((x): x is string => typeof x === "string");
    if (operator === "In") parts.push(`${key} in (${list.join(",")})`);
    else if (operator === "NotIn") parts.push(`${key} notin (${list.join(",")})`);
    else if (operator === "Exists") parts.push(key);
    else if (operator === "DoesNotExist") parts.push(`!${key}`);
  }
  return parts.length > 0 ? parts.join(",") : undefined;
}

/**
 * `health` of a Progressing or Degraded workload with the reason its Pods give, when one of
 * them is Degraded (a container in ImagePullBackOff, CrashLoopBackOff, CreateContainerConfigError
 * ..., see podHealth) or cannot be scheduled: the first such Pod's message, how many more,
 * then the workload's own message — "pod web-5d8f/web: ImagePullBackOff: ...; 2 of 4 replicas
 * updated". The status stays as it was: the progress deadline decides Degraded, as Argo CD and
 * kstatus do, and once it has passed ("progress deadline exceeded: ReplicaSet ... has timed
 * out progressing", which is also the message the Degraded alert carries) the Pods' reason
 * still leads. Anything else is returned as it is.
 */
export function explainByPods(health: HealthResult, pods: readonly KubeObject[]): HealthResult {
  if (health.status !== "Progressing" && health.status !== "Degraded") return health;
  const stuck = pods
    .map((p) => podHealth(p))
    .filter(
      (h) =>
        h.status === "Degraded" ||
        (h.status === "Progressing" && /Unschedulable/.test(h.message ?? "")),
    );
  const first = stuck[0];
  if (!first) return health;
  const more = stuck.length > 1 ? ` (and ${plural(stuck.length - 1, "more pod")})` : "";
  const own = str(health.message);
  return result(health.status, `${first.message}${more}${own ? `; ${own}` : ""}`);
}
