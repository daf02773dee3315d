// `npm run soak`: plumb's reconcile loop under API faults and overlapping runs, for
// minutes rather than a test's seconds. Not part of `npm test`.
//
// Against a real control plane ($KUBECONFIG, else one started in .plumb/soak-cluster) and a
// real Git server, through the fault proxy (test/support/fault-proxy.ts): for each fault rate
// (default 10% and 30% of requests: 500, 429 and 503 with Retry-After, 409 on status writes,
// resets before and after the API server ran the request, slow and never-answered requests),
// waves of 8–10 overlapping runs of a few Apps while commits land, each wave followed by the
// invariant checks of soak/invariants.ts; then a clean pass that must converge. Prints a summary
// (runs, faults, invariant violations) and exits 1 when any invariant was violated.
// Then the slow-link mode (soak/slow-link.ts): rounds in which a run's apply is held on the link
// past its Lease and lands after a newer run applied a newer commit; after the next full run
// the live objects must equal the applied revision.
// Then the hostile-render mode (`--hostile-render N`, bench/hostile.ts): N rounds in which the
// hostile inputs (a chart rendering a ConfigMap of 1,000,000 keys, a 200 MB values file, a
// repository holding a 200 MB file no App reads) are reconciled by CLI processes of their own,
// one after the other, while a wave of the soak's Apps runs and commits land; each CLI's peak
// RSS is held against the ceiling (PLUMB_MAX_RUN_MEMORY, default 512 MiB), the wave's
// invariants must hold, and a table prints case, outcome, peak RSS and condition.
//
//   npm run soak -- [--runs 240] [--rates 0.1,0.3] [--apps 6] [--seed 1] [--slow-link 3]
//                   [--hostile-render 0]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { parse } from "yaml";
import { type HostileResult, hostileRenders, hostileTable } from "../bench/hostile.ts";
import { Kube } from "../bench/kube.ts";
import { parseByteQuantity } from "../src/core/index.ts";
import { createKubePort, DiscoveryCache, type KubeTransport } from "../src/kube/index.ts";
import { nodeKubeTransport } from "../src/kube/node.ts";
import { type Ports, type RunResult, reconcileApp } from "../src/reconcile/index.ts";
import { createGitPort } from "../src/source/git.ts";
import { type FaultProxy, type FaultRule, startFaultProxy } from "../test/support/fault-proxy.ts";
import { type GitServer, startGitServer, type TestRepo } from "../test/support/git-server.ts";
import { callApi, installAppCrd } from "../test/support/kube-api.ts";
import { sleep } from "../test/support/wait.ts";
import { checkWave, type SoakApp, type Violation, type WaveRun } from "./invariants.ts";
import { type SlowLinkTally, slowLinkRound } from "./slow-link.ts";

const ROOT = resolve(import.meta.dirname, "..");
const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "240" },
    rates: { type: "string", default: "0.1,0.3" },
    apps: { type: "string", default: "6" },
    seed: { type: "string", default: "1" },
    "slow-link": { type: "string", default: "3" },
    "hostile-render": { type: "string", default: "0" },
  },
});
const RUNS_PER_RATE = Number(args.runs);
const RATES = args.rates.split(",").map(Number);
const APPS = Number(args.apps);
const SEED = Number(args.seed);
const SLOW_LINK_ROUNDS = Number(args["slow-link"]);
const HOSTILE_ROUNDS = Number(args["hostile-render"]);
/** The ceiling the hostile renders are held against: PLUMB_MAX_RUN_MEMORY as the CLI reads it. */
const CEILING =
  parseByteQuantity(process.env["PLUMB_MAX_RUN_MEMORY"] ?? "512Mi") ?? 512 * 1024 * 1024;

const started = Date.now();
const log = (s: string) =>
  process.stderr.write(`[soak ${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${s}\n`);

/** A small seeded PRNG (mulberry32), so a seed gives the same waves. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(SEED);
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;

/**
 * The faults at `rate`: the share of requests that get one (each rule's own rate is set so that
 * together they fault `rate` of the requests they all match), spread over the kinds an outside
 * fault suite found; a GET may also never be answered (rate/40) and a status write gets a 409 (rate/3).
 * Rules are tried in order.
 */
function faultRules(rate: number): FaultRule[] {
  const every = Number.POSITIVE_INFINITY;
  const share = (w: number) => 1 - (1 - rate) ** w;
  return [
    { method: "PUT", path: /\/status$/, rate: rate / 3, times: every, fault: { status: 409 } },
    { method: "GET", rate: rate / 40, times: every, fault: { hang: true } },
    { rate: share(0.24), times: every, fault: { status: 500 } },
    { rate: share(0.18), times: every, fault: { status: 429, retryAfter: 1 } },
    { rate: share(0.12), times: every, fault: { status: 503, retryAfter: 1 } },
    { rate: share(0.12), times: every, fault: { reset: "before" } },
    { rate: share(0.17), times: every, fault: { reset: "after" } },
    { rate: share(0.17), times: every, fault: { delayMs: 800 } },
  ];
}

interface Cluster {
  kubeconfig: string;
  stop(): void;
}

function startCluster(): Cluster {
  const env = process.env["KUBECONFIG"];
  if (env) return { kubeconfig: env, stop() {} };
  const dir = join(ROOT, ".plumb/soak-cluster");
  const sh = join(ROOT, "test/cluster/cluster.sh");
  execFileSync("bash", [sh, "stop", dir], { stdio: ["ignore", "ignore", "inherit"] });
  rmSync(dir, { recursive: true, force: true });
  log(`starting a local control plane in ${dir}`);
  execFileSync("bash", [sh, "start", dir], { stdio: ["ignore", "inherit", "inherit"] });
  return {
    kubeconfig: join(dir, "kubeconfig"),
    stop: () =>
      execFileSync("bash", [sh, "stop", dir], { stdio: ["ignore", "inherit", "inherit"] }),
  };
}

const cm = (name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {k: "${value}"}\n`;

/** One App's repository and what its head renders. */
interface Workload extends SoakApp {
  repo: TestRepo;
  files: Map<string, string>;
  serial: number;
}

/** A commit of the kinds a repository sees: a changed value, an added object, a removed one. */
async function mutate(w: Workload): Promise<void> {
  const names = [...w.files.keys()];
  const change: Record<string, string | null> = {};
  const roll = random();
  w.serial += 1;
  if (roll < 0.35 && names.length < 6) {
    const name = `${w.name}-cm${w.serial}`;
    change[`${name}.yaml`] = cm(name, `v${w.serial}`);
    w.files.set(name, `v${w.serial}`);
  } else if (roll < 0.6 && names.length > 2) {
    const name = pick(names);
    change[`${name}.yaml`] = null;
    w.files.delete(name);
  } else {
    const name = pick(names);
    change[`${name}.yaml`] = cm(name, `v${w.serial}`);
    w.files.set(name, `v${w.serial}`);
  }
  const sha = await w.repo.commit(change, `soak ${w.serial}`);
  w.renders.set(sha, new Map(w.files));
  w.head = sha;
}

interface Tally {
  rate: number;
  runs: number;
  outcomes: Record<string, number>;
  retryable: number;
  requests: number;
  faults: Record<string, number>;
  commits: number;
  waves: number;
  violations: Violation[];
  settled: boolean;
}

async function main(): Promise<number> {
  const cluster = startCluster();
  const dir = dirname(cluster.kubeconfig);
  const direct: KubeTransport = nodeKubeTransport(cluster.kubeconfig);
  const api = (m: string, p: string, body?: unknown, allow: number[] = []) =>
    callApi(direct, m, p, body, undefined, allow);
  let git: GitServer | undefined;
  let proxy: FaultProxy | undefined;
  let slow: FaultProxy | undefined;
  let held: FaultProxy | undefined;
  const tallies: Tally[] = [];
  const slowLink: SlowLinkTally = { rounds: 0, landed: 0, reported: 0, violations: [] };
  const hostile: HostileRound[] = [];
  const tmp = mkdtempSync(join(tmpdir(), "plumb-soak-"));
  try {
    await installAppCrd(direct);
    const kc = parse(readFileSync(cluster.kubeconfig, "utf8")) as {
      clusters: Array<{ cluster: { server: string } }>;
    };
    proxy = await startFaultProxy({
      server: kc.clusters[0]!.cluster.server,
      caFile: join(dir, "ca.crt"),
      seed: SEED,
    });
    const token = readFileSync(join(dir, "token"), "utf8").trim();
    const viaProxy = proxy.writeKubeconfig(mkdtempSync(join(tmp, "proxy-")), token);
    // plumb as an operator runs it, but with a 4 s attempt timeout (default 15 s) so the
    // never-answered requests do not stretch the soak; the 30 s deadline is the default.
    const faulty = nodeKubeTransport(viaProxy, { retry: { attemptTimeoutMs: 4_000 } });
    // A second way in, every answer 250 ms late: the run that starts each App's share of a
    // wave takes it, so it holds the Lease a while and the others queue behind it (a
    // Lease held 8 s while a newer commit landed has been seen).
    slow = await startFaultProxy({
      server: kc.clusters[0]!.cluster.server,
      caFile: join(dir, "ca.crt"),
      seed: SEED + 1,
    });
    slow.inject({ times: Number.POSITIVE_INFINITY, fault: { delayMs: 250 } });
    const slowKubeconfig = slow.writeKubeconfig(mkdtempSync(join(tmp, "slow-")), token);
    const lagging = nodeKubeTransport(slowKubeconfig, { retry: { attemptTimeoutMs: 4_000 } });
    const discovery = new DiscoveryCache();
    let runSerial = 0;
    const ports = (lag = false): Ports => ({
      kube: createKubePort(lag ? lagging : faulty, { discovery }),
      git: createGitPort(),
      holder: `soak-${++runSerial}`,
    });
    const clean = (): Ports => ({
      kube: createKubePort(direct),
      git: createGitPort(),
      holder: "soak-clean",
    });

    // Apps, two to a namespace (each other's bystanders), and an unmanaged ConfigMap in each.
    git = await startGitServer();
    const suffix = Date.now().toString(36);
    const apps: Workload[] = [];
    const bystanders: Array<{ namespace: string; name: string }> = [];
    for (let i = 0; i < APPS; i++) {
      const namespace = `soak-${suffix}-${Math.floor(i / 2)}`;
      const name = `app${i}`;
      if (i % 2 === 0) {
        await api(
          "POST",
          "/api/v1/namespaces",
          { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
          [409],
        );
        await api("POST", `/api/v1/namespaces/${namespace}/configmaps`, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "bystander" },
          data: { k: "unmanaged" },
        });
        bystanders.push({ namespace, name: "bystander" });
      }
      const files = new Map([0, 1, 2].map((k) => [`${name}-cm${k}`, "v0"]));
      const repo = await git.createRepo(
        `${namespace}-${name}`,
        Object.fromEntries([...files].map(([n, v]) => [`${n}.yaml`, cm(n, v)])),
        { allowSha1InWant: true },
      );
      const head = await repo.head();
      const w: Workload = {
        namespace,
        name,
        repo,
        files,
        serial: 0,
        head,
        renders: new Map([[head, new Map(files)]]),
      };
      apps.push(w);
      await api("POST", `/apis/plumb.dev/v1alpha1/namespaces/${namespace}/apps`, {
        apiVersion: "plumb.dev/v1alpha1",
        kind: "App",
        metadata: { name, namespace },
        spec: { source: { git: { url: repo.url, ref: "main" } }, interval: "1m" },
      });
      const first = await reconcileApp({ namespace, name }, clean(), new Date());
      if (first.syncStatus !== "Synced")
        throw new Error(`first sync of ${name}: ${JSON.stringify(first)}`);
    }
    log(`${APPS} Apps synced; ${RATES.length} rates × ${RUNS_PER_RATE} runs`);

    for (const rate of RATES) {
      const tally: Tally = {
        rate,
        runs: 0,
        outcomes: {},
        retryable: 0,
        requests: 0,
        faults: {},
        commits: 0,
        waves: 0,
        violations: [],
        settled: false,
      };
      tallies.push(tally);
      proxy.clear();
      for (const rule of faultRules(rate)) proxy.inject(rule);
      const seenBefore = proxy.requests.length;
      while (tally.runs < RUNS_PER_RATE) {
        const waveStart = new Date();
        // 2–3 Apps, so each gets 3–5 of the wave's runs at once.
        const chosen = [...apps].sort(() => random() - 0.5).slice(0, 2 + Math.floor(random() * 2));
        const size = 8 + Math.floor(random() * 3);
        const runs: WaveRun[] = [];
        const work: Array<Promise<unknown>> = [];
        for (let j = 0; j < size; j++) {
          const app = chosen[j % chosen.length]!;
          const lag = j < chosen.length;
          work.push(
            sleep(lag ? 0 : random() * 800).then(async () => {
              const result = await reconcileApp(
                { namespace: app.namespace, name: app.name },
                ports(lag),
                new Date(),
              ).catch(
                (e): RunResult => ({
                  app: `${app.namespace}/${app.name}`,
                  outcome: "Failed",
                  error: `threw: ${e instanceof Error ? e.message : String(e)}`,
                  retryable: true,
                  requests: { get: 0, list: 0, create: 0, update: 0, patch: 0, delete: 0 },
                }),
              );
              runs.push({ app, result });
            }),
          );
        }
        // Commits land while the runs are under way (one or two per App, in order).
        for (const app of chosen) {
          const count = random() < 0.3 ? 2 : 1;
          const at = [random() * 800, random() * 800].slice(0, count).sort((a, b) => a - b);
          work.push(
            (async () => {
              let t = 0;
              for (const ms of at) {
                await sleep(ms - t);
                t = ms;
                await mutate(app);
                tally.commits += 1;
              }
            })(),
          );
        }
        await Promise.all(work);
        tally.waves += 1;
        tally.runs += runs.length;
        for (const { result } of runs) {
          tally.outcomes[result.outcome] = (tally.outcomes[result.outcome] ?? 0) + 1;
          if (result.retryable) tally.retryable += 1;
        }
        const violations = await checkWave(direct, apps, bystanders, runs, waveStart);
        tally.violations.push(...violations);
        for (const v of violations) log(`VIOLATION ${v.kind} ${v.app}: ${v.detail}`);
        if (tally.waves % 5 === 0 || violations.length > 0) {
          log(
            `rate ${rate}: ${tally.runs} runs, ${tally.waves} waves, ${tally.violations.length} violations`,
          );
        }
      }
      const seen = proxy.requests.slice(seenBefore);
      tally.requests = seen.length;
      for (const r of seen) {
        if (!r.fault) continue;
        const key = r.fault === "status" ? `HTTP ${r.status}` : r.fault;
        tally.faults[key] = (tally.faults[key] ?? 0) + 1;
      }
      // Faults off: every App must converge to its head, and the invariants hold for all.
      proxy.clear();
      for (const a of apps) {
        for (let i = 0; i < 3; i++) {
          const r = await reconcileApp(
            { namespace: a.namespace, name: a.name },
            clean(),
            new Date(),
          );
          if (r.syncStatus === "Synced" && r.revision === a.head) break;
        }
      }
      const settled = await checkWave(direct, apps, bystanders, [], new Date());
      const heads = await Promise.all(
        apps.map(async (a) => {
          const app = await api(
            "GET",
            `/apis/plumb.dev/v1alpha1/namespaces/${a.namespace}/apps/${a.name}`,
          );
          return app.status?.revision === a.head && app.status?.syncStatus === "Synced";
        }),
      );
      tally.settled = settled.length === 0 && heads.every(Boolean);
      tally.violations.push(...settled);
      log(`rate ${rate} done: ${JSON.stringify(tally)}`);
    }

    // Slow link: a write held past the Lease lands after a newer commit's apply (selfHeal on).
    held = await startFaultProxy({
      server: kc.clusters[0]!.cluster.server,
      caFile: join(dir, "ca.crt"),
      seed: SEED + 2,
    });
    const heldKubeconfig = held.writeKubeconfig(mkdtempSync(join(tmp, "held-")), token);
    for (let i = 0; i < SLOW_LINK_ROUNDS; i++) {
      const w = apps[i % apps.length]!;
      await callApi(
        direct,
        "PATCH",
        `/apis/plumb.dev/v1alpha1/namespaces/${w.namespace}/apps/${w.name}`,
        { spec: { syncPolicy: { selfHeal: true } } },
        "application/merge-patch+json",
      );
      const name = pick([...w.files.keys()]);
      await slowLinkRound(
        {
          app: w,
          commit: async (cmName) => {
            w.serial += 1;
            const value = `v${w.serial}`;
            w.files.set(cmName, value);
            const sha = await w.repo.commit({ [`${cmName}.yaml`]: cm(cmName, value) });
            w.renders.set(sha, new Map(w.files));
            w.head = sha;
            return value;
          },
          liveValue: async (cmName) => {
            const o = await api("GET", `/api/v1/namespaces/${w.namespace}/configmaps/${cmName}`);
            return (o?.data as { k?: string } | undefined)?.k;
          },
          clean,
          read: () =>
            api("GET", `/apis/plumb.dev/v1alpha1/namespaces/${w.namespace}/apps/${w.name}`),
        },
        held,
        heldKubeconfig,
        name,
        slowLink,
        direct,
      );
      log(
        `slow link round ${i + 1}: ${JSON.stringify({ ...slowLink, violations: slowLink.violations.length })}`,
      );
    }
    for (const v of slowLink.violations) log(`VIOLATION ${v.kind} ${v.app}: ${v.detail}`);

    // Hostile renders, each a CLI process, while a wave of the soak's Apps runs (no faults).
    const kube = new Kube(cluster.kubeconfig);
    for (let i = 0; i < HOSTILE_ROUNDS; i++) {
      const waveStart = new Date();
      const runs: WaveRun[] = [];
      let stop = false;
      const wave = (async () => {
        while (!stop) {
          const app = pick(apps);
          if (random() < 0.5) await mutate(app);
          const result = await reconcileApp(
            { namespace: app.namespace, name: app.name },
            clean(),
            new Date(),
          );
          runs.push({ app, result });
        }
      })();
      const results = await hostileRenders(kube, cluster.kubeconfig, {
        root: ROOT,
        ceilingBytes: CEILING,
        log,
      }).finally(() => {
        stop = true;
      });
      await wave;
      // The wave's Apps converge to their heads (runs of the wave may have seen older ones).
      for (const a of apps) await reconcileApp(a, clean(), new Date());
      const violations = await checkWave(direct, apps, bystanders, runs, waveStart);
      hostile.push({ results, runs: runs.length, violations });
      for (const v of violations) log(`VIOLATION ${v.kind} ${v.app}: ${v.detail}`);
      log(`hostile round ${i + 1}: ${runs.length} runs alongside, ${violations.length} violations`);
    }
  } finally {
    await proxy?.stop();
    await slow?.stop();
    await held?.stop();
    await git?.stop();
    rmSync(tmp, { recursive: true, force: true });
    cluster.stop();
  }
  printSummary(tallies, slowLink, hostile);
  const failed =
    tallies.some((t) => t.violations.length > 0 || !t.settled) ||
    slowLink.violations.length > 0 ||
    hostile.some((h) => h.violations.length > 0 || h.results.some((r) => !r.underCeiling));
  return failed ? 1 : 0;
}

/** One round of the hostile-render mode: each input's CLI run, and the wave run alongside. */
interface HostileRound {
  results: HostileResult[];
  runs: number;
  violations: Violation[];
}

function printSummary(
  tallies: readonly Tally[],
  slowLink: SlowLinkTally,
  hostile: readonly HostileRound[],
): void {
  const lines = ["", "soak summary", ""];
  for (const t of tallies) {
    const faults = Object.values(t.faults).reduce((a, b) => a + b, 0);
    const kinds = Object.entries(t.faults)
      .sort()
      .map(([k, n]) => `${k} ${n}`)
      .join(", ");
    const byKind = new Map<string, number>();
    for (const v of t.violations) byKind.set(v.kind, (byKind.get(v.kind) ?? 0) + 1);
    lines.push(
      `fault rate ${(t.rate * 100).toFixed(0)}%: ${t.runs} runs in ${t.waves} waves, ${t.commits} commits`,
      `  outcomes: ${Object.entries(t.outcomes)
        .map(([k, n]) => `${k} ${n}`)
        .join(", ")} (${t.retryable} gave way or could not record)`,
      `  faults: ${faults} of ${t.requests} requests (${((100 * faults) / Math.max(1, t.requests)).toFixed(1)}%): ${kinds}`,
      `  invariant violations: ${t.violations.length}${byKind.size ? ` (${[...byKind].map(([k, n]) => `${k} ${n}`).join(", ")})` : ""}`,
      `  converged without faults: ${t.settled ? "yes" : "NO"}`,
      "",
    );
  }
  if (slowLink.rounds > 0) {
    lines.push(
      `slow link (a write held past the Lease): ${slowLink.rounds} rounds, ${slowLink.landed} late writes landed over the newer commit, ${slowLink.reported} reported and corrected by the next full run`,
      `  invariant violations: ${slowLink.violations.length} (live equals the applied revision after the next full run: ${slowLink.violations.length === 0 ? "yes" : "NO"})`,
      "",
    );
  }
  hostile.forEach((h, i) => {
    lines.push(
      hostileTable(
        `hostile renders, round ${i + 1} (CLI processes; ${h.runs} runs of the soak's Apps alongside, invariant violations: ${h.violations.length})`,
        h.results,
      ),
      "",
    );
  });
  lines.push(`took ${((Date.now() - started) / 1000).toFixed(0)} s`);
  process.stdout.write(`${lines.join("\n")}\n`);
  process.stdout.write(
    `${JSON.stringify(tallies.map(({ violations, ...t }) => ({ ...t, violations: violations.length })))}\n`,
  );
  process.stdout.write(
    `${JSON.stringify({ slowLink: { ...slowLink, violations: slowLink.violations.length } })}\n`,
  );
}

main().then(
  (code) => process.exit(code),
  (err) => {
    log(String(err instanceof Error ? (err.stack ?? err.message) : err));
    process.exit(2);
  },
);
