// Measurement 11: the render engines as a user pays them on Node.
// (a) A no-op `plumb reconcile NS/NAME` of podinfo's dev overlay (Kustomize, 25 objects)
//     against a no-op of guestbook (plain manifests), alternated in the same run, each a whole
//     process under /usr/bin/time (the CLI reaps its engine helper before it exits, so the
//     helper's CPU is in the figure): the ratio of their median CPU. A third App holds the
//     overlay's 25 objects as plain manifests: the difference to it is the engine's share.
// (b) Under a CPU hog that keeps every core busy (one `yes > /dev/null` per core, started
//     here): 10 CLI runs each of the overlay and of helm-guestbook (Helm), with the success
//     count, and 10 fresh processes per engine that load it and render once, with the render
//     time (load apart).
// Standalone: `node bench/engines.ts` (uses $KUBECONFIG, else starts a control plane).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { openSync } from "node:fs";
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { stringify } from "yaml";
import { createNodeEngines } from "../src/engines/node.ts";
import { fixtureFiles, REAL_FIXTURES } from "../test/support/git-server.ts";
import type { EngineCliResult, EngineHogResult, HogSample } from "./engines-report.ts";
import { guestbook } from "./fixtures.ts";
import type { BenchGit } from "./git.ts";
import type { Kube } from "./kube.ts";
import { benchCli, timeProcess } from "./process.ts";
import { summary } from "./process-report.ts";
import { ms } from "./stats.ts";

const run = promisify(execFile);
const NS = "bench-engines";
/** The overlay's objects land here (a namespace no other measurement uses). */
const KZ_NS = "bench-engines-kz";
const PLAIN_NS = "bench-engines-plain";
const HELM_NS = "bench-engines-helm";
const HOG_RUNS = 10;

export interface EngineBenchResult {
  cli: EngineCliResult;
  hog?: EngineHogResult;
}

/** Sets up the three Apps, measures (a) and then (b). */
export async function engineCost(
  root: string,
  kube: Kube,
  git: BenchGit,
  kubeconfig: string,
  log: (s: string) => void,
  runs = 10,
): Promise<EngineBenchResult> {
  const cli = benchCli(root);
  const env = { PLUMB_ALLOWED_DESTINATIONS: `${KZ_NS},${PLAIN_NS},${HELM_NS}` };
  const reconcile = (name: string) =>
    timeProcess(cli, ["reconcile", `${NS}/${name}`, "--kubeconfig", kubeconfig], env);

  const overlay = fixtureFiles(join(REAL_FIXTURES, "podinfo-kustomize-overlays"));
  // The dev overlay as it is, moved to a namespace of its own.
  const kz = await git.createRepo("engines-podinfo", {
    ...overlay,
    "bench/kustomization.yaml": `namespace: ${KZ_NS}\nresources:\n  - ../deploy/overlays/dev\n`,
  });
  // The same objects, rendered here once, committed as plain manifests (in another namespace):
  // what the overlay costs beyond its objects is the engine's share.
  const plain = await git.createRepo("engines-podinfo-plain", {
    "all.yaml": await renderedAsManifests(overlay, PLAIN_NS),
  });
  const chart = fixtureFiles(join(REAL_FIXTURES, "helm-guestbook"));
  const helm = await git.createRepo("engines-helm", chart);
  const gbRepo = await git.createRepo("engines-guestbook", guestbook.files());
  await kube.namespace(NS);
  await kube.namespace(HELM_NS); // the chart does not create its namespace
  await kube.createApp(NS, "guestbook", {
    source: { git: { url: gbRepo.url, ref: "main" } },
    interval: "1h",
  });
  await kube.createApp(NS, "podinfo-dev", {
    source: { git: { url: kz.url, ref: "main", path: "bench" } },
    destination: { namespace: KZ_NS },
    interval: "1h",
  });
  await kube.createApp(NS, "podinfo-dev-plain", {
    source: { git: { url: plain.url, ref: "main" } },
    destination: { namespace: PLAIN_NS },
    interval: "1h",
  });
  await kube.createApp(NS, "helm-guestbook", {
    source: { git: { url: helm.url, ref: "main" } },
    destination: { namespace: HELM_NS },
    interval: "1h",
  });
  // Settle each as process.ts does: until 3 runs in a row write nothing, at most 30 runs.
  for (const name of ["guestbook", "podinfo-dev", "podinfo-dev-plain", "helm-guestbook"]) {
    let last = "";
    for (let i = 0, quiet = 0; i < 30 && quiet < 3; i++) {
      const s = await reconcile(name);
      last = JSON.stringify(s.outcomes);
      quiet = s.exit === 0 && s.writes === 0 ? quiet + 1 : 0;
      if (quiet < 3) await new Promise((r) => setTimeout(r, 300));
    }
    log(`  ${name} settled (last run: ${last})`);
  }

  // (a) Alternated, so that a change in the machine's load falls on both alike.
  const guestbookRuns = [];
  const podinfoRuns = [];
  const plainRuns = [];
  for (let i = 0; i < runs; i++) {
    guestbookRuns.push(await reconcile("guestbook"));
    podinfoRuns.push(await reconcile("podinfo-dev"));
    plainRuns.push(await reconcile("podinfo-dev-plain"));
  }
  const result: EngineBenchResult = {
    cli: { guestbook: guestbookRuns, podinfo: podinfoRuns, plain: plainRuns },
  };
  const gb = summary(guestbookRuns);
  const pd = summary(podinfoRuns);
  log(
    `  no-op CPU: podinfo dev ${ms(pd.cpuMs)}, guestbook ${ms(gb.cpuMs)} (ratio ${(pd.cpuMs / gb.cpuMs).toFixed(2)}×; peak ${pd.peakMiB.toFixed(0)} / ${gb.peakMiB.toFixed(0)} MiB)`,
  );

  // (b) Under the hog.
  const hogs = startHog();
  try {
    const engine = async (engineName: "kustomize" | "helm", app: string) => {
      const runsUnderHog = [];
      const renders: HogSample[] = [];
      for (let i = 0; i < HOG_RUNS; i++) {
        runsUnderHog.push(await reconcile(app));
        renders.push(await renderOnce(root, engineName));
      }
      return { app, runs: runsUnderHog, renders };
    };
    result.hog = {
      hogs: hogs.length,
      cores: cpus().length,
      kustomize: await engine("kustomize", "podinfo-dev"),
      helm: await engine("helm", "helm-guestbook"),
    };
  } finally {
    for (const h of hogs) h.kill("SIGKILL");
  }
  return result;
}

/** The dev overlay built by the engine, in namespace `ns`, as one multi-document YAML file. */
async function renderedAsManifests(overlay: Record<string, string>, ns: string): Promise<string> {
  const engines = createNodeEngines();
  try {
    const out = await engines.kustomize({
      files: Object.entries({
        ...overlay,
        "plain/kustomization.yaml": `namespace: ${ns}\nresources:\n  - ../deploy/overlays/dev\n`,
      }).map(([path, content]) => ({ path, data: new TextEncoder().encode(content) })),
      path: "plain",
      maxOutputBytes: 20 << 20,
    });
    return out.objects.map((o) => stringify(o.object)).join("---\n");
  } finally {
    await engines.close();
  }
}

/** One `yes > /dev/null` per core: each keeps a core busy until killed. */
function startHog(): ChildProcess[] {
  const devNull = openSync("/dev/null", "w");
  return cpus().map(() => spawn("yes", [], { stdio: ["ignore", devNull, "ignore"] }));
}

/** A fresh process that loads `engine` and renders once (bench/engines-child.ts). */
async function renderOnce(root: string, engine: "kustomize" | "helm"): Promise<HogSample> {
  const { stdout } = await run(process.execPath, [join(root, "bench/engines-child.ts"), engine], {
    timeout: 180_000,
  });
  return JSON.parse(stdout.trim().split("\n").pop()!) as HogSample;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const { Kube, ROOT, startCluster } = await import("./kube.ts");
  const { startBenchGit } = await import("./git.ts");
  const { engineReport } = await import("./engines-report.ts");
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const cluster = startCluster(log);
  const git = await startBenchGit();
  try {
    const kube = new Kube(cluster.kubeconfig);
    await kube.installCrd();
    const r = await engineCost(ROOT, kube, git, cluster.kubeconfig, log);
    console.log(engineReport(r).join("\n"));
    if (!cluster.owned) await kube.cleanup([NS, KZ_NS, PLAIN_NS, HELM_NS]);
  } finally {
    await git.stop();
    if (cluster.owned) cluster.stop();
  }
}
