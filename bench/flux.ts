// Measurement 14: Flux's kustomize-controller side by side with plumb's no-op CLI runs, on the
// same API server and the same files: guestbook (plain manifests: Flux still generates a
// kustomization and runs kustomize build) and podinfo's dev overlay (Kustomize).
// The controller is built from its Go module by scripts/build-flux.sh (dist/flux/, minutes on
// first use; PLUMB_BENCH_FLUX_BIN names another binary of the same version). source-controller
// does not run: each workload is served as a Flux artifact (.tar.gz over a local HTTP server)
// and named by a GitRepository whose status carries the artifact, as source-controller writes
// it. Each case: the Kustomization applied and Ready, then `runs` rounds of one requested
// no-op reconcile (the controller's CPU from /proc/<pid>/stat around it, and over an idle
// window of the same wall time after it) and one no-op `plumb reconcile NS/NAME` CLI run
// (/usr/bin/time), alternated so that both see the same load.
// Standalone: `node bench/flux.ts` (uses $KUBECONFIG, else starts a control plane).
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { parse } from "yaml";
import type { KubeObject } from "../src/core/index.ts";
import { createKubePort, DiscoveryCache } from "../src/kube/index.ts";
import { fixtureFiles, REAL_FIXTURES } from "../test/support/git-server.ts";
import { capture, freePort, stopChild } from "../test/support/workerd.ts";
import { guestbook } from "./fixtures.ts";
import {
  artifactDigest,
  countsDelta,
  FLUX_VERSION,
  type FluxCase,
  type FluxResult,
  type FluxSample,
  fluxFigures,
  gitRepositoryStatus,
  procCpuTicks,
  restClientRequests,
} from "./flux-report.ts";
import type { BenchGit } from "./git.ts";
import { type Kube, sleep, waitFor } from "./kube.ts";
import { benchCli, timeProcess } from "./process.ts";
import { ms } from "./stats.ts";

const run = promisify(execFile);
/** The Kustomizations and GitRepositories (and the controller's runtime namespace). */
const FLUX_NS = "bench-flux";
/** plumb's Apps; guestbook's objects land in it. */
const PLUMB_NS = "bench-vs-flux";
/** Where each tool puts the workload's objects: the same files, each tool its own copy. */
const TARGETS = {
  guestbook: { flux: "bench-flux-gb", plumb: PLUMB_NS },
  "podinfo-dev": { flux: "bench-flux-kz", plumb: "bench-vs-flux-kz" },
} as const;
/** After lastHandledReconcileAt shows the request: the Event the controller sends after it. */
const SETTLE_MS = 250;
const BRANCH = "main";

/** The controller's binary and CRDs: PLUMB_BENCH_FLUX_BIN, else built into dist/flux/. */
export function fluxBuild(root: string, log: (s: string) => void): { bin: string; crds: string } {
  const dir = join(root, "dist/flux");
  const bin = process.env["PLUMB_BENCH_FLUX_BIN"];
  log(
    bin
      ? `  kustomize-controller: ${bin} (PLUMB_BENCH_FLUX_BIN); CRDs through scripts/build-flux.sh --crds`
      : "  kustomize-controller: scripts/build-flux.sh (first use: minutes to download and compile)",
  );
  execFileSync("bash", [join(root, "scripts/build-flux.sh"), ...(bin ? ["--crds"] : [])], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, PLUMB_FLUX_DIR: dir },
    timeout: 60 * 60_000,
  });
  return { bin: resolve(bin ?? join(dir, "kustomize-controller")), crds: join(dir, "crds") };
}

/** Measures both workloads; stops the controller and the artifact server on every exit. */
export async function fluxCost(
  root: string,
  kube: Kube,
  git: BenchGit,
  kubeconfig: string,
  log: (s: string) => void,
  runs = 10,
): Promise<FluxResult> {
  const { bin, crds } = fluxBuild(root, log);
  const loadBefore = loadavg();
  await installCrds(kube, crds);
  const artifacts = await startArtifactServer();
  const cli = benchCli(root);
  const env = {
    PLUMB_ALLOWED_DESTINATIONS: Object.values(TARGETS)
      .map((t) => t.plumb)
      .join(","),
  };
  const reconcile = (name: string) =>
    timeProcess(cli, ["reconcile", `${PLUMB_NS}/${name}`, "--kubeconfig", kubeconfig], env);
  let controller: Controller | undefined;
  try {
    await kube.namespace(FLUX_NS);
    await kube.namespace(PLUMB_NS);
    for (const t of Object.values(TARGETS)) {
      await kube.namespace(t.flux);
      await kube.namespace(t.plumb);
    }
    const overlay = fixtureFiles(join(REAL_FIXTURES, "podinfo-kustomize-overlays"));
    const workloads = [
      {
        name: "guestbook" as const,
        label: "guestbook (plain manifests, 2 objects)",
        files: guestbook.files(),
        path: "",
        wrap: undefined as ((ns: string) => Record<string, string>) | undefined,
      },
      {
        name: "podinfo-dev" as const,
        label: "podinfo dev overlay (Kustomize, 25 objects)",
        files: overlay,
        path: "bench",
        // As bench/engines.ts: the dev overlay as it is, moved to a namespace of its own.
        wrap: (ns: string) => ({
          "bench/kustomization.yaml": `namespace: ${ns}\nresources:\n  - ../deploy/overlays/dev\n`,
        }),
      },
    ];
    for (const w of workloads) {
      const t = TARGETS[w.name];
      const repo = await git.createRepo(`vs-flux-${w.name}`, {
        ...w.files,
        ...w.wrap?.(t.plumb),
      });
      await kube.createApp(PLUMB_NS, w.name, {
        source: { git: { url: repo.url, ref: BRANCH, ...(w.path ? { path: w.path } : {}) } },
        ...(t.plumb === PLUMB_NS ? {} : { destination: { namespace: t.plumb } }),
        interval: "1h",
      });
      const served = artifacts.add(
        `gitrepository/${FLUX_NS}/${w.name}/${repo.head}.tar.gz`,
        await tarGz({ ...w.files, ...w.wrap?.(t.flux) }),
      );
      await createGitRepository(kube, w.name, served, repo.head);
      await createKustomization(kube, w.name, w.path, t.flux);
    }

    controller = await startController(bin, kubeconfig);
    const c = controller;
    for (const w of workloads) {
      await waitFor(
        `Kustomization ${w.name} Ready`,
        async () => {
          const k = await getKustomization(kube, w.name);
          const ready = k.status?.conditions?.find((x) => x.type === "Ready");
          if (ready?.status === "False" && ready.reason !== "Progressing") {
            throw new Error(`${ready.reason}: ${ready.message}`);
          }
          return ready?.status === "True" && k.status?.lastAppliedRevision !== undefined;
        },
        { everyMs: 200, signal: c.exited },
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}\ncontroller output:\n${c.output().slice(-3000)}`);
      });
      log(`  Flux: Kustomization ${w.name} Ready`);
    }
    // Settle plumb's Apps as bench/engines.ts does (until 3 runs in a row write nothing), and
    // warm Flux's side with two unmeasured requested reconciles.
    // A loaded controller-manager rolls the overlay's Deployments out slowly and the HPAs report
    // late: every such change is a real status write, so settling may take a minute.
    for (const w of workloads) {
      for (let i = 0, quiet = 0; i < 90 && quiet < 3; i++) {
        const s = await reconcile(w.name);
        quiet = s.exit === 0 && s.writes === 0 ? quiet + 1 : 0;
        if (quiet < 3) await sleep(1000);
      }
      for (let i = 0; i < 2; i++) await requestReconcile(kube, c, artifacts, w.name, `warm-${i}`);
    }

    const cases: FluxCase[] = workloads.map((w) => ({
      name: w.name,
      label: w.label,
      flux: [],
      plumb: [],
    }));
    for (let i = 0; i < runs; i++) {
      for (const fc of cases) {
        fc.flux.push(await requestReconcile(kube, c, artifacts, fc.name, `run-${i}`));
        fc.plumb.push(await reconcile(fc.name));
      }
    }
    for (const fc of cases) {
      const f = fluxFigures(fc);
      log(
        `  ${fc.name}: Flux ${ms(f.fluxCpuMs)} CPU per reconcile (gross ${ms(f.fluxGrossCpuMs)}, idle ${ms(f.fluxIdleCpuMs)}, ${f.fluxRequests} API requests); plumb ${ms(f.plumbCpuMs)} per no-op CLI run (${f.plumbRequests} API requests; medians of ${runs})`,
      );
    }
    return {
      version: FLUX_VERSION,
      binary: relative(root, bin).startsWith("..") ? bin : relative(root, bin),
      peakMiB: c.peakMiB(),
      loadAverage: { before: loadBefore, after: loadavg() },
      cases,
    };
  } finally {
    if (controller) await stopChild(controller.child);
    await artifacts.stop();
    // Without the controller nothing would remove the finalizers: drop them so that the
    // Kustomizations (and their namespace) can go. The applied objects stay.
    for (const name of Object.keys(TARGETS)) {
      const path = `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${FLUX_NS}/kustomizations/${name}`;
      await kube
        .api(
          "PATCH",
          path,
          { metadata: { finalizers: null } },
          "application/merge-patch+json",
          [404],
        )
        .catch(() => undefined);
      await kube.api("DELETE", path, undefined, undefined, [404]).catch(() => undefined);
    }
  }
}

interface Controller {
  child: ChildProcess;
  metricsUrl: string;
  output(): string;
  /** Aborted when the process exits. */
  exited: AbortSignal;
  /** utime + stime so far, ms. */
  cpuMs(): number;
  /** VmHWM, MiB (undefined once it exited). */
  peakMiB(): number | undefined;
}

/** Starts kustomize-controller against `kubeconfig` and waits until it is ready. */
async function startController(bin: string, kubeconfig: string): Promise<Controller> {
  const metricsPort = await freePort();
  const healthPort = await freePort();
  const child = spawn(
    bin,
    [
      `--metrics-addr=127.0.0.1:${metricsPort}`,
      `--health-addr=127.0.0.1:${healthPort}`,
      "--watch-all-namespaces=true",
      "--enable-leader-election=false",
      "--concurrent=1",
      "--log-encoding=console",
    ],
    {
      env: { ...process.env, KUBECONFIG: kubeconfig, RUNTIME_NAMESPACE: FLUX_NS },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const output = capture(child);
  // However the benchmark ends (a phase's timeout, SIGINT, process.exit), the controller goes too.
  const kill = () => child.kill("SIGKILL");
  process.once("exit", kill);
  child.once("exit", () => process.off("exit", kill));
  const abort = new AbortController();
  child.once("exit", (code, signal) =>
    abort.abort(new Error(`kustomize-controller exited (${code ?? signal})`)),
  );
  child.once("error", (err) =>
    abort.abort(new Error(`kustomize-controller (${bin}): ${err.message}`)),
  );
  const pid = child.pid;
  if (pid === undefined) {
    await new Promise((r) => setImmediate(r));
    throw abort.signal.reason ?? new Error(`kustomize-controller did not start: ${bin}`);
  }
  const hz = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
  const c: Controller = {
    child,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    output,
    exited: abort.signal,
    cpuMs: () => (procCpuTicks(readFileSync(`/proc/${pid}/stat`, "utf8")) * 1000) / hz,
    peakMiB: () => {
      try {
        const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
        return kb === undefined ? undefined : Number(kb) / 1024;
      } catch {
        return undefined;
      }
    },
  };
  try {
    await waitFor(
      "kustomize-controller ready",
      async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined))?.ok,
      { everyMs: 200, signal: abort.signal },
    );
  } catch (err) {
    await stopChild(child);
    throw new Error(`${String(err)}\n${output().slice(-3000)}`);
  }
  return c;
}

/** The controller's API requests so far, by method. */
async function requestCounts(c: Controller): Promise<Record<string, number>> {
  const res = await fetch(c.metricsUrl);
  if (!res.ok) throw new Error(`kustomize-controller metrics: HTTP ${res.status}`);
  return restClientRequests(await res.text());
}

/**
 * One requested reconcile of Kustomization `name`, measured: the controller's CPU from the
 * annotation until its status shows the request (+ SETTLE_MS), then over an idle window of the
 * same length; its API requests (the metrics are read outside the CPU windows).
 */
async function requestReconcile(
  kube: Kube,
  c: Controller,
  artifacts: ArtifactServer,
  name: string,
  token: string,
): Promise<FluxSample> {
  const path = `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${FLUX_NS}/kustomizations/${name}`;
  const requestedAt = `${new Date().toISOString()}-${token}`;
  const before = await requestCounts(c);
  const gets = artifacts.gets();
  const t0 = Date.now();
  const cpu0 = c.cpuMs();
  await kube.api(
    "PATCH",
    path,
    { metadata: { annotations: { "reconcile.fluxcd.io/requestedAt": requestedAt } } },
    "application/merge-patch+json",
  );
  const k = await waitFor(
    `Kustomization ${name} handled ${requestedAt}`,
    async () => {
      const k = await getKustomization(kube, name);
      return k.status?.lastHandledReconcileAt === requestedAt ? k : undefined;
    },
    { everyMs: 50, signal: c.exited },
  );
  await sleep(SETTLE_MS);
  const cpu1 = c.cpuMs();
  const wallMs = Date.now() - t0;
  await sleep(wallMs);
  const cpu2 = c.cpuMs();
  const after = await requestCounts(c);
  const ready = k.status?.conditions?.find((x) => x.type === "Ready");
  if (ready?.status !== "True") {
    throw new Error(`Kustomization ${name}: not Ready after a reconcile: ${ready?.message}`);
  }
  return {
    cpuMs: cpu1 - cpu0,
    wallMs,
    idleCpuMs: cpu2 - cpu1,
    requests: countsDelta(before, after),
    artifactGets: artifacts.gets() - gets,
  };
}

interface KustomizationStatus {
  status?: {
    lastHandledReconcileAt?: string;
    lastAppliedRevision?: string;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
  };
}

function getKustomization(kube: Kube, name: string): Promise<KustomizationStatus> {
  return kube.api(
    "GET",
    `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${FLUX_NS}/kustomizations/${name}`,
  );
}

/** A GitRepository (never fetched: no source-controller) whose status carries the artifact. */
async function createGitRepository(
  kube: Kube,
  name: string,
  served: ServedArtifact,
  commit: string,
): Promise<void> {
  const base = `/apis/source.toolkit.fluxcd.io/v1/namespaces/${FLUX_NS}/gitrepositories`;
  const created = (await kube.api("POST", base, {
    apiVersion: "source.toolkit.fluxcd.io/v1",
    kind: "GitRepository",
    metadata: { name, namespace: FLUX_NS },
    spec: { url: `https://git.invalid/${name}`, interval: "1h", ref: { branch: BRANCH } },
  })) as KubeObject & { metadata: { generation?: number } };
  await kube.api(
    "PATCH",
    `${base}/${name}/status`,
    {
      status: gitRepositoryStatus({
        ...served,
        branch: BRANCH,
        commit,
        generation: created.metadata.generation ?? 1,
        now: new Date(),
      }),
    },
    "application/merge-patch+json",
  );
}

async function createKustomization(
  kube: Kube,
  name: string,
  path: string,
  targetNamespace: string,
): Promise<void> {
  await kube.api(
    "POST",
    `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${FLUX_NS}/kustomizations`,
    {
      apiVersion: "kustomize.toolkit.fluxcd.io/v1",
      kind: "Kustomization",
      metadata: { name, namespace: FLUX_NS },
      spec: {
        interval: "1h",
        path: `./${path}`,
        prune: true,
        sourceRef: { kind: "GitRepository", name },
        targetNamespace,
        timeout: "2m",
      },
    },
  );
}

/** Applies every CRD in `dir` (field manager plumb-bench) and waits until each kind is served. */
async function installCrds(kube: Kube, dir: string): Promise<void> {
  const port = createKubePort(kube.raw, { discovery: new DiscoveryCache() });
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()) {
    const crd = parse(readFileSync(join(dir, file), "utf8")) as KubeObject & {
      spec: {
        group: string;
        names: { kind: string };
        versions: Array<{ name: string; storage?: boolean }>;
      };
    };
    await port.apply(crd);
    const v = crd.spec.versions.find((x) => x.storage) ?? crd.spec.versions[0]!;
    await waitFor(
      `${crd.spec.names.kind} CRD served`,
      () => port.resourceFor(`${crd.spec.group}/${v.name}`, crd.spec.names.kind),
      { everyMs: 200 },
    );
  }
}

interface ServedArtifact {
  url: string;
  path: string;
  digest: string;
  size: number;
}

interface ArtifactServer {
  add(path: string, bytes: Buffer): ServedArtifact;
  /** GETs answered so far. */
  gets(): number;
  stop(): Promise<void>;
}

/** Serves added archives at http://127.0.0.1:<port>/<path>, as source-controller's storage. */
async function startArtifactServer(): Promise<ArtifactServer> {
  const files = new Map<string, Buffer>();
  let gets = 0;
  const server: Server = createServer((req, res) => {
    const body = files.get((req.url ?? "/").slice(1));
    if (req.method === "GET") gets += 1;
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/gzip", "content-length": body.length });
    res.end(req.method === "HEAD" ? undefined : body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    add(path, bytes) {
      files.set(path, bytes);
      return { url: `${base}/${path}`, path, digest: artifactDigest(bytes), size: bytes.length };
    },
    gets: () => gets,
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** `files` as a gzipped tar archive (GNU tar writes it, entries sorted, owner 0, mtime 0). */
async function tarGz(files: Record<string, string>): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), "plumb-bench-flux-"));
  try {
    for (const [p, content] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      writeFileSync(join(dir, p), content);
    }
    const { stdout } = await run(
      "tar",
      [
        "--sort=name",
        "--mtime=@0",
        "--owner=0",
        "--group=0",
        "--numeric-owner",
        "-cf",
        "-",
        "-C",
        dir,
        ".",
      ],
      { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
    );
    return gzipSync(stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const { Kube, ROOT, startCluster } = await import("./kube.ts");
  const { startBenchGit } = await import("./git.ts");
  const { fluxReport, fluxTargets } = await import("./flux-report.ts");
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const cluster = startCluster(log);
  const git = await startBenchGit();
  try {
    const kube = new Kube(cluster.kubeconfig);
    await kube.installCrd();
    const r = await fluxCost(ROOT, kube, git, cluster.kubeconfig, log);
    console.log(
      [
        ...fluxReport(r),
        "",
        ...fluxTargets(r).map(
          (t) =>
            `${t.pass === undefined ? "-" : t.pass ? "PASS" : "MISS"} ${t.target}: ${t.measured}`,
        ),
      ].join("\n"),
    );
    if (!cluster.owned) await kube.cleanup();
  } finally {
    await git.stop();
    if (cluster.owned) cluster.stop();
  }
}
