// Health rule for v1/Pod. Messages start with "pod <name>" so they read well when a
// workload's health is explained by one of its pods.

import type { KubeObject } from "../core/index.ts";
import {
  arr,
  conditionsOf,
  describe,
  findCondition,
  type HealthResult,
  nameOf,
  num,
  obj,
  result,
  specOf,
  statusOf,
  str,
} from "./util.ts";

/**
 * Waiting reasons that will not resolve by themselves: the kubelet backs off (CrashLoopBackOff,
 * ImagePullBackOff) or cannot build the container from its spec. With {@link isFailingWait},
 * also any reason Argo CD (health_pod.go) counts: prefix "Err", suffix "Error" or "BackOff"
 * (ImageInspectError, PreStartHookError, VerifyNonRootError...).
 */
export const FAILING_WAIT_REASONS: ReadonlySet<string> = new Set([
  "CrashLoopBackOff",
  "ImagePullBackOff",
  "ErrImagePull",
  "ErrImageNeverPull",
  "InvalidImageName",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
]);

/** A container waiting for a reason that will not resolve by itself. */
export function isFailingWait(reason: string): boolean {
  return (
    FAILING_WAIT_REASONS.has(reason) ||
    reason.startsWith("Err") ||
    reason.endsWith("Error") ||
    reason.endsWith("BackOff")
  );
}

interface Terminated {
  reason?: string;
  message?: string;
  exitCode: number;
}

interface ContainerStatus {
  name: string;
  /** The image the spec names (the kubelet copies it into the status). */
  image?: string;
  ready: boolean;
  restartCount: number;
  waiting?: { reason?: string; message?: string };
  terminated?: Terminated;
  /** lastState.terminated: how the previous run of the container ended. */
  lastTerminated?: Terminated;
}

function terminatedOf(v: unknown): Terminated {
  const t = obj(v);
  const out: Terminated = { exitCode: num(t["exitCode"], 0) };
  const reason = str(t["reason"]);
  // A termination message is often a file's last line, newline included.
  const message = str(t["message"])?.trim();
  if (reason) out.reason = reason;
  if (message) out.message = message;
  return out;
}

function containerStatuses(list: unknown): ContainerStatus[] {
  return arr(list).map((item) => {
    const c = obj(item);
    const state = obj(c["state"]);
    const cs: ContainerStatus = {
      name: str(c["name"]) ?? "?",
      ready: c["ready"] === true,
      restartCount: num(c["restartCount"], 0),
    };
    const image = str(c["image"]);
    if (image) cs.image = image;
    if (state["waiting"] !== undefined) {
      const w = obj(state["waiting"]);
      cs.waiting = {};
      const reason = str(w["reason"]);
      const message = str(w["message"]);
      if (reason) cs.waiting.reason = reason;
      if (message) cs.waiting.message = message;
    }
    if (state["terminated"] !== undefined) cs.terminated = terminatedOf(state["terminated"]);
    const last = obj(c["lastState"])["terminated"];
    if (last !== undefined && last !== null) cs.lastTerminated = terminatedOf(last);
    return cs;
  });
}

/** "pod web-1/app: Error (exit code 1): message" for a container that terminated badly. */
function terminatedMessage(pod: string, c: ContainerStatus): string | undefined {
  const t = c.terminated;
  if (!t || (t.exitCode === 0 && t.reason !== "OOMKilled")) return undefined;
  const head = `pod ${pod}/${c.name}: ${t.reason ?? "terminated"} (exit code ${t.exitCode})`;
  return t.message ? `${head}: ${t.message}` : head;
}

/** "Error (exit code 3): cannot read /etc/app.yaml": how a run of a container ended. */
function runEnded(t: Terminated): string {
  const how = `${t.reason ?? "terminated"} (exit code ${t.exitCode})`;
  return t.message ? `${how}: ${t.message}` : how;
}

/**
 * The restart policy the kubelet applies to a container (KEP-753 sidecars: an init container
 * with restartPolicy Always restarts whatever the Pod's policy; other init containers are
 * retried on failure unless the Pod's policy is Never).
 */
function restartPolicyOf(o: KubeObject, name: string, init: boolean): string {
  const policy = str(specOf(o)["restartPolicy"]) ?? "Always";
  if (!init) return policy;
  const spec = arr(specOf(o)["initContainers"])
    .map(obj)
    .find((c) => c["name"] === name);
  if (spec && spec["restartPolicy"] === "Always") return "Always";
  return policy === "Never" ? "Never" : "OnFailure";
}

/**
 * What keeps a container from running, as one message per state, whichever half of the
 * kubelet's cycle the status was read in, so a steady failure writes a steady status:
 * - a crash loop is "CrashLoopBackOff: last run: <how it ended>". The kubelet writes
 *   waiting/CrashLoopBackOff only as a back-off expires, just before it restarts the container
 *   (kubelet 1.35: pod_workers.go completeWork requeues the Pod at that moment, and
 *   convertToAPIContainerStatuses turns the back-off into Waiting); for the rest of each
 *   back-off (10 s, 20 s, ... 5 min) the state is the ended run, terminated, with restartCount
 *   above 0. Either way it is the same crash loop, and the kubelet's waiting message (whose
 *   back-off grows with each restart) is replaced by how the last run ended.
 * - a failed pull is "ImagePullBackOff: Back-off pulling image "x": ErrImagePull: <the pull
 *   error>", the kubelet's own ImagePullBackOff message (1.35), which it alternates with
 *   ErrImagePull and the bare error: that one is given the same words.
 * - any other waiting reason that will not resolve by itself (isFailingWait) as the kubelet
 *   gives it.
 * A container that ended and that the kubelet will not restart (restartPolicy Never, or
 * OnFailure after exit code 0) is left to the Pod's phase.
 */
function containerFailure(pod: string, c: ContainerStatus, policy: string): string | undefined {
  const at = `pod ${pod}/${c.name}`;
  const reason = c.waiting?.reason;
  const message = c.waiting?.message;
  if (reason === "CrashLoopBackOff" && c.lastTerminated) {
    return `${at}: CrashLoopBackOff: last run: ${runEnded(c.lastTerminated)}`;
  }
  if (reason === "ErrImagePull" && message && c.image) {
    return `${at}: ImagePullBackOff: Back-off pulling image "${c.image}": ErrImagePull: ${message}`;
  }
  if (reason && isFailingWait(reason)) return `${at}: ${reason}${message ? `: ${message}` : ""}`;
  const t = c.terminated;
  const restarts = policy === "Always" || (policy === "OnFailure" && t?.exitCode !== 0);
  if (t && c.restartCount > 0 && restarts)
    return `${at}: CrashLoopBackOff: last run: ${runEnded(t)}`;
  return undefined;
}

/**
 * v1/Pod, after Argo CD (gitops-engine pkg/health/health_pod.go) and kstatus (core.go
 * podConditions).
 * - phase Succeeded → Healthy.
 * - phase Failed → Degraded with status.message (e.g. eviction) or the first container,
 *   init containers first, that terminated with a non-zero exit code or OOMKilled.
 * - any init or app container waiting for a reason that will not resolve by itself
 *   ({@link isFailingWait}), or crash-looping between two restarts (terminated, restarted
 *   before, and to be restarted again) → Degraded, naming pod, container and reason, in one
 *   message per state (containerFailure). Unlike Argo this applies whatever the restartPolicy
 *   (Argo skips it for OnFailure and Never so that its hook pods are not failed early; plumb
 *   waits for hooks by their phase), as kstatus does for CrashLoopBackOff.
 * - phase Running:
 *   - restartPolicy Never or OnFailure: the pod runs to completion, so it is Progressing until
 *     it Succeeds, ready or not (Argo).
 *   - restartPolicy Always (the default): condition Ready=True → Healthy; else a container
 *     whose previous run terminated (lastState.terminated: it crashed and was restarted) →
 *     Degraded (Argo), else Progressing.
 * - phase Pending (or not yet set) → Progressing, with the scheduler's reason when the
 *   PodScheduled condition is False (kstatus reports it as Failed after 15s; here it stays
 *   Progressing, since cluster autoscalers routinely resolve it).
 * - phase Unknown (node lost) → Unknown.
 */
export function podHealth(o: KubeObject): HealthResult {
  const name = nameOf(o);
  const st = statusOf(o);
  const phase = str(st["phase"]);
  const init = containerStatuses(st["initContainerStatuses"]);
  const app = containerStatuses(st["containerStatuses"]);
  if (phase === "Succeeded") return result("Healthy", `pod ${name}: completed`);
  if (phase === "Failed") {
    const message = str(st["message"]);
    if (message) {
      const reason = str(st["reason"]);
      return result("Degraded", `pod ${name}: ${reason ? `${reason}: ` : ""}${message}`);
    }
    for (const c of [...init, ...app]) {
      const m = terminatedMessage(name, c);
      if (m) return result("Degraded", m);
    }
    return result("Degraded", `pod ${name}: failed`);
  }
  const failing = [
    ...init.map((c) => containerFailure(name, c, restartPolicyOf(o, c.name, true))),
    ...app.map((c) => containerFailure(name, c, restartPolicyOf(o, c.name, false))),
  ].filter((m) => m !== undefined);
  if (failing.length > 0) return result("Degraded", failing.join("; "));
  const conds = conditionsOf(o);
  if (phase === "Running") {
    const policy = str(specOf(o)["restartPolicy"]) ?? "Always";
    if (policy === "Never" || policy === "OnFailure") {
      return result("Progressing", `pod ${name}: running to completion (restartPolicy ${policy})`);
    }
    if (findCondition(conds, "Ready")?.status === "True") {
      return result("Healthy", `pod ${name}: running`);
    }
    const restarted = app.find((c) => c.lastTerminated !== undefined);
    if (restarted?.lastTerminated) {
      const t = restarted.lastTerminated;
      const how = `${t.reason ?? "terminated"} (exit code ${t.exitCode})`;
      return result(
        "Degraded",
        `pod ${name}/${restarted.name}: not ready after its last run ended: ${how}${t.message ? `: ${t.message}` : ""}`,
      );
    }
    const ready = app.filter((c) => c.ready).length;
    return result("Progressing", `pod ${name}: ${ready} of ${app.length} containers ready`);
  }
  if (phase === "Unknown") return result("Unknown", `pod ${name}: node not reporting`);
  const scheduled = findCondition(conds, "PodScheduled");
  if (scheduled?.status === "False") {
    return result("Progressing", `pod ${name}: ${describe(scheduled)}`);
  }
  return result("Progressing", `pod ${name}: pending`);
}
