// Health, rollouts and hooks on a real node (PLUMB_CLUSTER_NODE=kubelet): the upstream kubelet
// runs the Pods with containerd and runc, so every Pod status here is one a kubelet wrote, not
// one a test wrote. Images are busybox-static built on this machine (test/cluster/node.sh).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../../src/app/index.ts";
import type { KubeObject } from "../../../src/core/index.ts";
import { createNodeEngines, type NodeEngines } from "../../../src/engines/node.ts";
import { createChartPort } from "../../../src/source/chart.ts";
import { type GitServer, startGitServer } from "../../support/git-server.ts";
import { startRegistry, type TestRegistry } from "../../support/registry.ts";
import { waitFor } from "../../support/wait.ts";
import {
  BUSYBOX,
  getApp,
  getObject,
  kubectl,
  newApp,
  patchAppSpec,
  pods,
  reconcileOnce,
  reconcileUntil,
  startRealNode,
} from "./support.ts";

let git: GitServer;
let registry: TestRegistry;
let engines: NodeEngines;
let stopNode = async () => {};
beforeAll(async () => {
  stopNode = await startRealNode();
  git = await startGitServer();
  registry = await startRegistry();
  engines = createNodeEngines();
});
afterAll(async () => {
  await engines?.close();
  await registry?.stop();
  await git?.stop();
  await stopNode();
});

/**
 * A Deployment of Pods labelled app=NAME, container `main` of `image` (busybox); `container` adds
 * YAML lines to the container (indent 8), `spec` to the Deployment's spec (indent 2).
 */
function deployment(name: string, container: string[], spec: string[] = [], image = BUSYBOX) {
  return [
    "apiVersion: apps/v1",
    "kind: Deployment",
    "metadata:",
    `  name: ${name}`,
    "spec:",
    ...spec.map((l) => `  ${l}`),
    `  selector: {matchLabels: {app: ${name}}}`,
    "  template:",
    `    metadata: {labels: {app: ${name}}}`,
    "    spec:",
    "      terminationGracePeriodSeconds: 1",
    "      containers:",
    "      - name: main",
    `        image: ${image}`,
    ...container.map((l) => `        ${l}`),
    "",
  ].join("\n");
}

type ContainerState = Record<string, { reason?: string; message?: string; exitCode?: number }>;
type PodStatus = {
  phase?: string;
  podIP?: string;
  conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }>;
  containerStatuses?: Array<{
    ready: boolean;
    restartCount: number;
    state: ContainerState;
    lastState?: ContainerState;
  }>;
};
const podStatus = (o: KubeObject | undefined): PodStatus => (o?.["status"] ?? {}) as PodStatus;
const health = (a: App) => a.status?.healthStatus;
const reason = (a: App) => a.status?.healthReason ?? "";

describe("on a real node", () => {
  it("a Deployment is Available once the kubelet's readiness probes pass, and not before", async () => {
    // httpd serves /www; the readiness probe asks for /www/ready, which only the test creates.
    const repo = await git.createRepo("ready", {
      "web.yaml": deployment(
        "web",
        [
          'command: ["sh", "-c", "mkdir -p /www && exec httpd -f -p 8080 -h /www"]',
          "readinessProbe: {httpGet: {path: /ready, port: 8080}, periodSeconds: 1}",
        ],
        ["replicas: 2"],
      ),
    });
    await newApp("node-ready", "web", { source: { git: { url: repo.url, ref: "main" } } });
    expect((await reconcileOnce("node-ready", "web")).outcome).toBe("Reconciled");
    const running = await waitFor("both web containers running", async () => {
      const list = await pods("node-ready", "app=web");
      const up = list.filter((p) => podStatus(p).containerStatuses?.[0]?.state["running"]);
      return up.length === 2 ? up : undefined;
    });
    // The containers run, the kubelet probes them every second and gets 404: not Ready, and
    // the App waits, run after run.
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 1_000));
      await reconcileOnce("node-ready", "web");
      const app = await getApp("node-ready", "web");
      expect(health(app)).toBe("Progressing");
      expect(reason(app)).toContain("Deployment node-ready/web:");
    }
    for (const p of await pods("node-ready", "app=web")) {
      const ready = podStatus(p).conditions?.find((c) => c.type === "Ready");
      expect(ready?.status).toBe("False");
    }
    for (const p of running) {
      kubectl([
        "exec",
        "-n",
        "node-ready",
        p.metadata.name,
        "--",
        "sh",
        "-c",
        "echo ok > /www/ready",
      ]);
    }
    const { app } = await reconcileUntil(
      "node-ready",
      "web",
      "Healthy",
      (a) => health(a) === "Healthy",
    );
    expect(reason(app)).toBe("1 object healthy");
    const deploy = await getObject("/apis/apps/v1/namespaces/node-ready/deployments/web");
    const conds = (deploy?.["status"] ?? {}) as {
      conditions?: Array<{ type: string; status: string }>;
    };
    expect(conds.conditions?.find((c) => c.type === "Available")?.status).toBe("True");
    // What the probe reads is what the container serves, on the Pod's own address.
    for (const p of await pods("node-ready", "app=web")) {
      const ip = podStatus(
        await getObject(`/api/v1/namespaces/node-ready/pods/${p.metadata.name}`),
      ).podIP;
      expect(ip).toMatch(/^10\.244\.\d+\.\d+$/);
      expect(await (await fetch(`http://${ip}:8080/ready`)).text()).toBe("ok\n");
    }
  });

  it("a container that keeps crashing makes the App Degraded, CrashLoopBackOff and its last words named", async () => {
    const repo = await git.createRepo("crash", {
      "app.yaml": deployment(
        "crash",
        [
          'command: ["sh", "-c", "echo starting; echo cannot read /etc/app.yaml > /dev/termination-log; exit 3"]',
          // Without a probe the kubelet may report the Pod Ready in the instant it runs, and a
          // Deployment once complete never times out (Progressing stays NewReplicaSetAvailable):
          // a probe that never passes keeps it from ever being available, as the test means.
          'readinessProbe: {exec: {command: ["false"]}, periodSeconds: 1}',
        ],
        ["progressDeadlineSeconds: 10"],
      ),
    });
    await newApp("node-crash", "crash", { source: { git: { url: repo.url, ref: "main" } } });
    const { app } = await reconcileUntil(
      "node-crash",
      "crash",
      "Degraded, CrashLoopBackOff named",
      (a) => health(a) === "Degraded" && reason(a).includes("CrashLoopBackOff"),
    );
    expect(reason(app)).toMatch(
      /^Deployment node-crash\/crash: pod crash-[a-z0-9]+-[a-z0-9]+\/main: CrashLoopBackOff: last run: Error \(exit code 3\): cannot read \/etc\/app\.yaml; progress deadline exceeded: ReplicaSet "crash-[a-z0-9]+" has timed out progressing\.$/,
    );
    // The kubelet really ran it, more than once.
    const [pod] = await pods("node-crash", "app=crash");
    const c = podStatus(pod).containerStatuses?.[0];
    expect(c?.restartCount).toBeGreaterThanOrEqual(1);
    expect(c?.lastState?.["terminated"]).toMatchObject({ exitCode: 3, reason: "Error" });
    // (The kubelet keeps one ended container: the current one, between restarts.)
    await waitFor(
      "the crashed container's log",
      async () => kubectl(["logs", "-n", "node-crash", pod!.metadata.name]) === "starting\n",
    );
  });

  it("an image the registry does not have: ImagePullBackOff with the registry's answer, Degraded at the deadline", async () => {
    const image = `${registry.host}/plumb/absent:1.0`;
    const repo = await git.createRepo("pull", {
      "app.yaml": deployment("pull", [], ["progressDeadlineSeconds: 10"], image),
    });
    await newApp("node-pull", "pull", { source: { git: { url: repo.url, ref: "main" } } });
    const { app } = await reconcileUntil(
      "node-pull",
      "pull",
      "Degraded, ImagePullBackOff named",
      (a) => health(a) === "Degraded" && reason(a).includes("ImagePullBackOff"),
    );
    expect(reason(app)).toMatch(
      new RegExp(
        `^Deployment node-pull/pull: pod pull-[a-z0-9]+-[a-z0-9]+/main: ImagePullBackOff: Back-off pulling image "${image}": ErrImagePull: .*failed to pull and unpack image "${image}": .*: not found; progress deadline exceeded: `,
      ),
    );
    // The kubelet alternates ErrImagePull and ImagePullBackOff; the App's reason holds still.
    const kubeletSaid = new Set<string>();
    const appSaid = new Set<string>();
    await waitFor(
      "the kubelet to report both ErrImagePull and ImagePullBackOff",
      async () => {
        await reconcileOnce("node-pull", "pull");
        appSaid.add(reason(await getApp("node-pull", "pull")));
        const [pod] = await pods("node-pull", "app=pull");
        const waiting = podStatus(pod).containerStatuses?.[0]?.state["waiting"]?.reason;
        if (waiting) kubeletSaid.add(waiting);
        return kubeletSaid.has("ErrImagePull") && kubeletSaid.has("ImagePullBackOff");
      },
      { everyMs: 1_000 },
    );
    expect([...appSaid]).toEqual([reason(app)]);
    // containerd asked the registry (plain HTTP: a loopback registry).
    expect(registry.requests).toContain("HEAD /v2/plumb/absent/manifests/1.0");
  });

  it("a ConfigMap the running Pods use is kept pending, not pruned; deleted by hand, the next Pod fails with CreateContainerConfigError", async () => {
    const settings =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  MODE: live\n";
    const api = (version: string) =>
      deployment(
        "api",
        [
          'command: ["sh", "-c", "trap \'exit 0\' TERM; echo mode=$MODE; while :; do sleep 1; done"]',
          "envFrom: [{configMapRef: {name: settings}}]",
          `env: [{name: VERSION, value: "${version}"}]`,
        ],
        ["progressDeadlineSeconds: 10"],
      );
    const repo = await git.createRepo("config", {
      "settings.yaml": settings,
      "api.yaml": api("1"),
    });
    await newApp("node-config", "api", { source: { git: { url: repo.url, ref: "main" } } });
    await reconcileUntil("node-config", "api", "Healthy", (a) => health(a) === "Healthy");
    const [first] = await pods("node-config", "app=api");
    expect(kubectl(["logs", "-n", "node-config", first!.metadata.name])).toBe("mode=live\n");

    // The commit drops the ConfigMap while the running Pod still reads it: plumb keeps it,
    // pending prune, naming the Pod (pruning it would break the next Pod of this ReplicaSet).
    await repo.commit({ "settings.yaml": null });
    const held = await reconcileUntil(
      "node-config",
      "api",
      "ConfigMap pending prune",
      (_a, r) => r.outcome === "Reconciled",
    );
    expect(await getObject("/api/v1/namespaces/node-config/configmaps/settings")).toBeDefined();
    const line = held.app.status?.resources?.find((r) => r.name === "settings");
    expect(line?.status).toBe("PrunePending");
    expect(line?.message).toContain(
      `ConfigMap node-config/settings is still used by Pod ${first!.metadata.name}`,
    );

    // Deleted by someone else, the next rollout's Pod cannot be created without it.
    kubectl(["delete", "configmap", "-n", "node-config", "settings"]);
    await repo.commit({ "api.yaml": api("2") });
    const { app } = await reconcileUntil(
      "node-config",
      "api",
      "Degraded, CreateContainerConfigError named",
      (a) => health(a) === "Degraded" && reason(a).includes("CreateContainerConfigError"),
    );
    expect(reason(app)).toMatch(
      /^Deployment node-config\/api: pod api-[a-z0-9]+-[a-z0-9]+\/main: CreateContainerConfigError: configmap "settings" not found; progress deadline exceeded: /,
    );
    // The old Pod still serves.
    expect(
      podStatus(await getObject(`/api/v1/namespaces/node-config/pods/${first!.metadata.name}`))
        .phase,
    ).toBe("Running");
  });

  it("a Helm pre-upgrade Job runs its command on the node and is waited for; a failing one stops the upgrade", async () => {
    const files = {
      "Chart.yaml": "apiVersion: v2\nname: shop\nversion: 1.0.0\n",
      "values.yaml": "schema: 1\nfail: false\n",
      "templates/cm.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop\ndata:\n  schema: '{{ .Values.schema }}'\n",
      "templates/migrate.yaml": [
        "apiVersion: batch/v1",
        "kind: Job",
        "metadata:",
        "  name: migrate",
        "  annotations:",
        "    helm.sh/hook: pre-install,pre-upgrade",
        "    helm.sh/hook-delete-policy: before-hook-creation",
        "spec:",
        "  backoffLimit: 0",
        "  template:",
        "    spec:",
        "      restartPolicy: Never",
        "      terminationGracePeriodSeconds: 1",
        "      containers:",
        "      - name: migrate",
        `        image: ${BUSYBOX}`,
        "        command:",
        "        - sh",
        "        - -c",
        "        - sleep 2; {{ if .Values.fail }}echo schema {{ .Values.schema }} refused >&2; exit 4{{ else }}echo migrated to schema {{ .Values.schema }} > /dev/termination-log{{ end }}",
        "",
      ].join("\n"),
    };
    const repo = await git.createRepo("hooks", files);
    await newApp("node-hooks", "shop", { source: { git: { url: repo.url, ref: "main" } } });
    const helm = { engines, charts: createChartPort() };
    expect((await reconcileOnce("node-hooks", "shop", helm)).outcome).toBe("Reconciled");

    await patchAppSpec("node-hooks", "shop", { source: { helm: { values: { schema: 2 } } } });
    const upgraded = await reconcileOnce("node-hooks", "shop", helm);
    expect(upgraded).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const job = await getObject("/apis/batch/v1/namespaces/node-hooks/jobs/migrate");
    const jobStatus = job?.["status"] as { startTime: string; completionTime: string };
    const [hookPod] = await pods("node-hooks", `job-name=migrate`);
    // The command ran (its own words, with the new values) for at least its 2 s sleep...
    expect(podStatus(hookPod).containerStatuses?.[0]?.state["terminated"]).toMatchObject({
      exitCode: 0,
      message: "migrated to schema 2\n",
    });
    expect(
      Date.parse(jobStatus.completionTime) - Date.parse(jobStatus.startTime),
    ).toBeGreaterThanOrEqual(2_000);
    // ...and the upgrade went on only after it had completed.
    const cm = await getObject("/api/v1/namespaces/node-hooks/configmaps/shop");
    expect(cm?.["data"]).toEqual({ schema: "2" });
    const cmApplied = cm?.metadata.managedFields?.find((m) => m.manager === "plumb")?.time;
    expect(Date.parse(cmApplied!)).toBeGreaterThanOrEqual(Date.parse(jobStatus.completionTime));

    // A migration that exits non-zero fails the run: the rest is not applied.
    await patchAppSpec("node-hooks", "shop", {
      source: { helm: { values: { schema: 3, fail: true } } },
    });
    const failed = await reconcileOnce("node-hooks", "shop", helm);
    expect(failed.outcome).toBe("Failed");
    expect(failed.error).toContain(
      "hook Job node-hooks/migrate failed: Job failed: BackoffLimitExceeded",
    );
    expect((await getObject("/api/v1/namespaces/node-hooks/configmaps/shop"))?.["data"]).toEqual({
      schema: "2",
    });
    const [refusedPod] = await pods("node-hooks", "job-name=migrate");
    expect(kubectl(["logs", "-n", "node-hooks", refusedPod!.metadata.name])).toBe(
      "schema 3 refused\n",
    );
  });
});
