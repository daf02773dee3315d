// Flux's benchmark shape (github.com/fluxcd/flux-benchmark, timoni/modules/flux-ks-bench and
// manifests/podinfo/podinfo.yaml): N Apps in one namespace, each its own source path holding
// podinfo's ServiceAccount, Service, Deployment (scaled to zero, as the benchmark's PODS
// default) and Ingress named podinfo-<i>app. The Apps are run by the shards of one CronJob:
// `plumb reconcile --all --shard I/N`, N processes at once, as the CronJob's pods would be.
import type { App } from "../src/app/index.ts";
import type { BenchGit } from "./git.ts";
import { type Kube, pool } from "./kube.ts";
import { type ProcessFigure, timedCli } from "./scale-process.ts";

/** Flux's published figures for the same shape (RESULTS.md, Flux v2.9.0, 1,000 Kustomizations). */
export const FLUX_1000 = { wallS: 4 * 60 + 13, maxMiB: 223 } as const;

/** One burst: `apps` new Apps synced by `shards` parallel `reconcile --all --shard` processes. */
export interface BurstFigure {
  apps: number;
  shards: number;
  /** From the first pass's start until the last pass's processes exited. */
  wallMs: number;
  /** Tick passes run (each `shards` processes) until no App was Progressing. */
  passes?: number;
  /** User + system CPU of all shards. */
  cpuMs: number;
  /** Peak RSS of each shard process, MiB. */
  peakMiB: number[];
  /** API requests the runs reported (reads + writes), over wallMs. */
  requests: number;
  requestsPerS: number;
  /** 429 responses the API server counted during the burst (apiserver_request_total). */
  throttled: number;
  /** Apps whose Ready condition is True after the last pass. */
  ready: number;
  /** Objects in the namespace carrying plumb's ownership afterwards (4 per App expected). */
  objects: number;
  outcomes: Record<string, number>;
  errors: string[];
}

/**
 * The repository: c/<i>/podinfo.yaml, podinfo's four objects for index `<i>app`. The Ingress
 * host carries `ns` so bursts of two sizes on one cluster do not claim each other's hosts
 * (plumb refuses a host another Ingress serves: HostConflict).
 */
export function fluxShapeFiles(apps: number, ns: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < apps; i++) files[`c/${i}/podinfo.yaml`] = podinfoYaml(`${i}app`, ns);
  return files;
}

/** manifests/podinfo/podinfo.yaml of flux-benchmark with INDEX substituted, PODS 0, MCPU 1m. */
function podinfoYaml(index: string, ns: string): string {
  const labels = `  labels:
    app.kubernetes.io/name: "podinfo-${index}"
    app.kubernetes.io/version: "6.5.3"
    app.kubernetes.io/managed-by: plumb
`;
  return `apiVersion: v1
kind: ServiceAccount
metadata:
  name: "podinfo-${index}"
${labels}---
apiVersion: v1
kind: Service
metadata:
  name: "podinfo-${index}"
${labels}spec:
  type: ClusterIP
  ports:
    - port: 9898
      targetPort: http
      protocol: TCP
      name: http
    - port: 9999
      targetPort: grpc
      protocol: TCP
      name: grpc
  selector:
    app.kubernetes.io/name: "podinfo-${index}"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: "podinfo-${index}"
${labels}spec:
  replicas: 0
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: "podinfo-${index}"
  template:
    metadata:
      labels:
        app.kubernetes.io/name: "podinfo-${index}"
      annotations:
        prometheus.io/scrape: "true"
        prometheus.io/port: "9898"
    spec:
      terminationGracePeriodSeconds: 30
      serviceAccountName: "podinfo-${index}"
      containers:
        - name: podinfo
          image: "ghcr.io/stefanprodan/podinfo:6.5.3"
          imagePullPolicy: IfNotPresent
          command:
            - ./podinfo
            - --port=9898
            - --cert-path=/data/cert
            - --port-metrics=9797
            - --grpc-port=9999
            - --grpc-service-name=podinfo
            - --level=info
            - --random-delay=false
            - --random-error=false
          env:
            - name: PODINFO_UI_COLOR
              value: "#34577c"
          ports:
            - name: http
              containerPort: 9898
              protocol: TCP
            - name: http-metrics
              containerPort: 9797
              protocol: TCP
            - name: grpc
              containerPort: 9999
              protocol: TCP
          livenessProbe:
            exec:
              command: [podcli, check, http, "localhost:9898/healthz"]
            initialDelaySeconds: 1
            timeoutSeconds: 5
            failureThreshold: 3
            successThreshold: 1
            periodSeconds: 10
          readinessProbe:
            exec:
              command: [podcli, check, http, "localhost:9898/readyz"]
            initialDelaySeconds: 1
            timeoutSeconds: 5
            failureThreshold: 3
            successThreshold: 1
            periodSeconds: 10
          volumeMounts:
            - name: data
              mountPath: /data
          resources:
            requests:
              cpu: "1m"
              memory: 16Mi
      volumes:
        - name: data
          emptyDir: {}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: "podinfo-${index}"
${labels}spec:
  ingressClassName: "nginx"
  rules:
    - host: "podinfo-${index}.${ns}.local"
      http:
        paths:
          - path: /
            pathType: ImplementationSpecific
            backend:
              service:
                name: "podinfo-${index}"
                port:
                  number: 9898
`;
}

/** The API server's count of 429 responses so far (sum of apiserver_request_total code="429"). */
export async function throttledSoFar(kube: Kube): Promise<number> {
  const res = await kube.raw("GET", "/metrics");
  const text = typeof res.body === "string" ? res.body : "";
  let n = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("apiserver_request_total{") && line.includes('code="429"')) {
      n += Number(line.slice(line.lastIndexOf(" ") + 1)) || 0;
    }
  }
  return n;
}

/** The part of an App's status the burst reads. */
interface BurstStatus {
  conditions?: Array<{ type: string; status: string; reason?: string }> | undefined;
  healthStatus?: string | undefined;
}

/** True when the App's Ready condition is True. */
export function appReady(status: BurstStatus | undefined): boolean {
  return status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

/**
 * True when the App still waits on its objects: not Ready, and its health or its Ready reason
 * is Progressing (a Deployment the controller has not yet observed). Such an App is due at
 * every tick, so the burst runs another pass; an App that failed or was never run is not.
 */
export function appProgressing(status: BurstStatus | undefined): boolean {
  if (appReady(status)) return false;
  return (
    status?.healthStatus === "Progressing" ||
    (status?.conditions?.some((c) => c.type === "Ready" && c.reason === "Progressing") ?? false)
  );
}

/**
 * The collections plumb reads in a burst, listed once before the first 429 count: a watch
 * cache that is still starting answers 429 (e.g. cluster-scoped AppPolicies on a fresh API
 * server), which is warm-up, not the burst's load.
 */
export const WARM_UP_LISTS = [
  "/apis/plumb.dev/v1alpha1/apps",
  "/apis/plumb.dev/v1alpha1/apppolicies",
  "/api/v1/serviceaccounts",
  "/api/v1/services",
  "/api/v1/events",
  "/apis/apps/v1/deployments",
  "/apis/networking.k8s.io/v1/ingresses",
  "/apis/coordination.k8s.io/v1/leases",
] as const;

/** At most this many tick passes (each of `shards` processes) wait for Progressing Apps. */
const MAX_PASSES = 8;

/**
 * Creates `apps` Apps of Flux's shape in namespace `ns` (one repository, App i on path c/i),
 * then runs tick passes, each `shards` `reconcile --all --shard I/N` processes at once, until
 * no App is Progressing (at most MAX_PASSES), as a CronJob's ticks would. Wall, CPU, requests
 * and 429s are over all passes; peak RSS per shard is the largest of its passes.
 * `env` goes to every shard (e.g. PLUMB_KUBE_QPS, NODE_OPTIONS).
 */
export async function burst(
  cli: string,
  kube: Kube,
  git: BenchGit,
  kubeconfig: string,
  apps: number,
  shards: number,
  log: (s: string) => void,
  env: Record<string, string> = {},
): Promise<BurstFigure> {
  const ns = `bench-burst-${apps}`;
  const repo = await git.createRepo(ns, fluxShapeFiles(apps, ns));
  await kube.namespace(ns);
  await pool(
    Array.from({ length: apps }, (_, i) => i),
    16,
    (i) =>
      kube.createApp(ns, `podinfo-${i}`, {
        source: { git: { url: repo.url, ref: "main", path: `c/${i}` } },
        interval: "60m",
      }),
  );
  log(`  ${apps} Apps of Flux's shape created; ${shards} shards of reconcile --all`);
  for (const p of WARM_UP_LISTS) await kube.raw("GET", `${p}?limit=1`);
  const t0 = await throttledSoFar(kube);
  const started = Date.now();
  const figs: ProcessFigure[] = [];
  const peakMiB: number[] = Array.from({ length: shards }, () => 0);
  let list: App[] = [];
  let passes = 0;
  do {
    passes++;
    const pass = await Promise.all(
      Array.from({ length: shards }, (_, i) =>
        timedCli(
          cli,
          [
            "reconcile",
            "--all",
            "--namespace",
            ns,
            "--shard",
            `${i}/${shards}`,
            "--kubeconfig",
            kubeconfig,
          ],
          env,
        ),
      ),
    );
    pass.forEach((f, i) => {
      peakMiB[i] = Math.max(peakMiB[i]!, f.peakMiB);
    });
    figs.push(...pass);
    list = await kube.listApps(ns);
    const waiting = list.filter((a) => appProgressing(a.status)).length;
    log(`  pass ${passes}: ${Math.round((Date.now() - started) / 1000)} s, ${waiting} Progressing`);
    if (waiting === 0) break;
  } while (passes < MAX_PASSES);
  const wallMs = Date.now() - started;
  const throttled = (await throttledSoFar(kube)) - t0;
  const ready = list.filter((a) => appReady(a.status)).length;
  let objects = 0;
  for (const p of [
    `/api/v1/namespaces/${ns}/serviceaccounts`,
    `/api/v1/namespaces/${ns}/services`,
    `/apis/apps/v1/namespaces/${ns}/deployments`,
    `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`,
  ]) {
    const l = (await kube.api("GET", p)) as {
      items: Array<{ metadata: { managedFields?: Array<{ manager?: string }> } }>;
    };
    objects += l.items.filter((o) =>
      o.metadata.managedFields?.some((m) => m.manager?.startsWith("plumb")),
    ).length;
  }
  const requests = figs.reduce((s, f) => s + f.reads + f.writes, 0);
  const outcomes: Record<string, number> = {};
  for (const f of figs)
    for (const [k, v] of Object.entries(f.outcomes)) outcomes[k] = (outcomes[k] ?? 0) + v;
  return {
    apps,
    shards,
    wallMs,
    cpuMs: figs.reduce((s, f) => s + f.cpuMs, 0),
    peakMiB,
    passes,
    requests,
    requestsPerS: requests / (wallMs / 1000),
    throttled,
    ready,
    objects,
    outcomes,
    errors: figs.flatMap((f) => f.errors).slice(0, 5),
  };
}

/** The sizes measured: Flux's 100 and 1,000; PLUMB_BENCH_BURST_SIZES (e.g. "20,200") instead. */
export const burstSizes = (): number[] =>
  process.env["PLUMB_BENCH_BURST_SIZES"]?.split(",").map(Number) ?? [100, 1000];
/** Shards (parallel processes): PLUMB_BENCH_SHARDS, else 2 (the machine's 2 cores). */
export const burstShards = (): number => Number(process.env["PLUMB_BENCH_SHARDS"] ?? 2);

/** Targets (on the 1,000-App burst): wall, peak RSS per shard, requests/s with no 429. */
export const BURST_TARGETS = { wallS: 120, peakMiB: 175, requestsPerS: 150 } as const;

const s1 = (ms: number) => (ms / 1000).toFixed(1);

/** The burst targets as PASS/MISS, on the largest burst measured (undefined: not measured). */
export function burstTargets(
  bursts: BurstFigure[] | undefined,
): Array<{ target: string; measured: string; pass: boolean | undefined }> {
  const b = bursts?.reduce<BurstFigure | undefined>(
    (m, x) => (m === undefined || x.apps > m.apps ? x : m),
    undefined,
  );
  const want = (what: string) => `burst of 1,000 Apps of Flux's shape: ${what}`;
  if (!b) return [{ target: want("measured"), measured: "not measured", pass: undefined }];
  const all = b.ready === b.apps && b.objects === 4 * b.apps;
  const peak = Math.max(...b.peakMiB);
  return [
    {
      target: want(`all applied and Ready ≤ ${BURST_TARGETS.wallS} s wall (${b.apps} Apps)`),
      measured: `${s1(b.wallMs)} s, ${b.ready}/${b.apps} Ready, ${b.objects}/${4 * b.apps} objects owned`,
      pass: all && b.wallMs <= BURST_TARGETS.wallS * 1000,
    },
    {
      target: want(`peak RSS ≤ ${BURST_TARGETS.peakMiB} MiB per process`),
      measured: `${b.peakMiB.map((m) => m.toFixed(0)).join(", ")} MiB (${b.shards} shards)`,
      pass: peak <= BURST_TARGETS.peakMiB,
    },
    {
      target: want(`≤ ${BURST_TARGETS.requestsPerS} API requests/s, no 429`),
      measured: `${b.requestsPerS.toFixed(0)} requests/s (${b.requests} requests), ${b.throttled} 429s`,
      pass: b.requestsPerS <= BURST_TARGETS.requestsPerS && b.throttled === 0,
    },
  ];
}

/**
 * The model for 10,000 Apps from a measured burst: per-App wall (one shard) and CPU, and the
 * shards needed to finish in 9 min (Argo CD's published figure) and in 2 min, each shard a
 * process of the measured peak RSS (a shard's memory does not grow with its App count once
 * per-App state is freed as each App finishes: the measured peak is taken as the bound).
 */
export function tenKModel(b: BurstFigure): {
  appSecondsPerShard: number;
  cpuMsPerApp: number;
  shardsFor9Min: number;
  shardsFor2Min: number;
  peakMiBPerShard: number;
} {
  // Wall per App within one shard: the shards ran side by side, each over apps/shards Apps.
  const appSecondsPerShard = b.wallMs / 1000 / (b.apps / b.shards);
  return {
    appSecondsPerShard,
    cpuMsPerApp: b.cpuMs / b.apps,
    shardsFor9Min: Math.ceil((10_000 * appSecondsPerShard) / 540),
    shardsFor2Min: Math.ceil((10_000 * appSecondsPerShard) / 120),
    peakMiBPerShard: Math.max(...b.peakMiB),
  };
}

/** The text report of section 12. */
export function burstReport(bursts: BurstFigure[] | undefined): string[] {
  if (!bursts?.length) return ["  not measured"];
  const lines = [
    "  apps  shards  passes  wall s  CPU s  peak MiB/shard     requests  req/s  429  Ready  objects",
  ];
  for (const b of bursts) {
    lines.push(
      `  ${String(b.apps).padStart(4)}  ${String(b.shards).padStart(6)}  ${String(b.passes ?? 1).padStart(6)}  ${s1(b.wallMs).padStart(6)}  ${s1(b.cpuMs).padStart(5)}  ${b.peakMiB
        .map((m) => m.toFixed(0))
        .join("/")
        .padEnd(
          16,
        )} ${String(b.requests).padStart(8)}  ${b.requestsPerS.toFixed(0).padStart(5)}  ${String(b.throttled).padStart(3)}  ${String(b.ready).padStart(5)}  ${String(b.objects).padStart(7)}`,
    );
    if (b.errors.length) lines.push(`    errors: ${b.errors.join(" | ").slice(0, 400)}`);
  }
  const big = bursts[bursts.length - 1]!;
  const m = tenKModel(big);
  lines.push(
    `  10,000 Apps (model from the ${big.apps}-App burst): ${m.appSecondsPerShard.toFixed(3)} s wall and ${m.cpuMsPerApp.toFixed(0)} ms CPU per App in a shard; ${m.shardsFor9Min} shards for 9 min, ${m.shardsFor2Min} for 2 min, ≤ ${m.peakMiBPerShard.toFixed(0)} MiB each`,
    `  Flux (RESULTS.md, v2.9.0): 1,000 Kustomizations ${FLUX_1000.wallS} s, ${FLUX_1000.maxMiB} MiB kustomize-controller`,
  );
  return lines;
}
