// An experiment, not a shipped path: would a V8 startup snapshot of the CLI bundle
// (`node --snapshot-blob B --build-snapshot`, then `node --snapshot-blob B ARGS`) make a no-op
// `reconcile NS/NAME` of guestbook cheaper than the bin (the bundle through vm.Script with its
// code cache)? Builds a snapshot from the current bundle with the modules a reconcile loads
// already evaluated (zod under `jitless`, the runtime config, the tick, the loop, the node
// ports), once compiled lazily and once with every function compiled (`--no-lazy` while the
// bundle is compiled), then times the three interleaved with `node -e 0` under /usr/bin/time.
// node:http, node:https, node:tls and node:http2 cannot be in a snapshot (the build aborts:
// "global handle not serialized", the HTTP parser binding): the probe hands the bundle
// stand-ins that load them on their first use at run time, and fails the build if a module
// touches one while it is evaluated.
// `node bench/snapshot-probe.ts [RUNS]` (default 9; uses $KUBECONFIG, else starts a control plane).
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { buildCli, DIST } from "../scripts/build-cli.ts";
import { guestbook } from "./fixtures.ts";
import { timeProcess } from "./process.ts";
import { ms } from "./stats.ts";

const run = promisify(execFile);

/** The lazy modules a reconcile or a tick evaluates, in the order the CLI imports them. */
const PRELOAD = [
  "node_modules/zod/index.js",
  "src/runtime/config.ts",
  "functions/cli-tick.ts",
  "src/reconcile/index.ts",
  "functions/node-ports.ts",
  "src/kube/node.ts",
];

/**
 * The bundle with two hooks for the snapshot's entry: `__plumbRun(argv)` instead of running
 * main at once, and `__plumbPreload()` running the initialisers of PRELOAD (esbuild names each
 * lazy module's initialiser `init_x = __esm({ "path"() {...} })`), zod's `jitless` set first.
 * @throws when the bundle's shape is not the one expected (a newer esbuild, a moved main)
 */
export function probeBundle(source: string): string {
  const call = "\nmain(process.argv.slice(2)).then(";
  if (source.split(call).length !== 2) throw new Error("bundle: main's call not found once");
  const init = (path: string) => {
    const m = new RegExp(
      `var (init_\\w+) = __esm\\(\\{\\s*"${path.replace(/[./]/g, "\\$&")}"\\(\\)`,
    ).exec(source);
    if (!m) throw new Error(`bundle: no lazy initialiser for ${path}`);
    return `${m[1]}();`;
  };
  const [zod, ...rest] = PRELOAD.map(init);
  if (!/\bvar zod_exports = /.test(source)) throw new Error("bundle: zod's exports not found");
  return (
    source.replace(call, "\nglobalThis.__plumbRun = (argv) => main(argv).then(") +
    `\nglobalThis.__plumbPreload = () => { ${zod} zod_exports.config({ jitless: true }); ${rest.join(" ")} };\n`
  );
}

/** The snapshot builder's entry (CommonJS; only built-in modules may be required while building). */
const ENTRY = String.raw`
const { readFileSync } = require("node:fs");
const v8 = require("node:v8");
const vm = require("node:vm");
const file = process.env.PROBE_BUNDLE;
const source = readFileSync(file, "latin1").replace(/^#!/, "//");
const LATE = new Set(["http", "https", "tls", "http2"]);
const realBuiltin = process.getBuiltinModule.bind(process);
let building = true;
const late = (id) => {
  let real;
  const get = () => {
    if (building) throw new Error("snapshot: " + id + " used while building");
    return (real ??= realBuiltin(id));
  };
  return new Proxy({}, {
    get: (_, k) => Reflect.get(get(), k),
    has: (_, k) => Reflect.has(get(), k),
    ownKeys: () => Reflect.ownKeys(get()),
    getOwnPropertyDescriptor: (_, k) => {
      const d = Reflect.getOwnPropertyDescriptor(get(), k);
      if (d) d.configurable = true;
      return d;
    },
  });
};
const builtin = (id) => (LATE.has(id.replace(/^node:/, "")) ? late(id) : realBuiltin(id));
process.getBuiltinModule = builtin;
if (process.env.PROBE_EAGER) v8.setFlagsFromString("--no-lazy");
const wrapped = "(function (exports, require, module, __filename, __dirname) { " + source + "\n})";
const fn = new vm.Script(wrapped, { filename: file }).runInThisContext();
v8.setFlagsFromString("--lazy");
let runtimeRequire;
const req = (id) => builtin(id) ?? runtimeRequire(id);
const bundle = { exports: {} };
fn(bundle.exports, req, bundle, file, require("node:path").dirname(file));
globalThis.__plumbPreload();
const runCli = globalThis.__plumbRun;
process.getBuiltinModule = realBuiltin;
v8.startupSnapshot.setDeserializeMainFunction(() => {
  building = false;
  runtimeRequire = require("node:module").createRequire(file);
  runCli(process.argv.slice(1));
});
`;

/** Builds a snapshot blob of `bundle`; `eager`: every function compiled into it. */
async function buildBlob(dir: string, bundle: string, eager: boolean): Promise<string> {
  const entry = join(dir, "entry.cjs");
  writeFileSync(entry, ENTRY);
  const blob = join(dir, eager ? "eager.blob" : "lazy.blob");
  await run(process.execPath, ["--snapshot-blob", blob, "--build-snapshot", entry], {
    env: { ...process.env, PROBE_BUNDLE: bundle, ...(eager ? { PROBE_EAGER: "1" } : {}) },
  });
  return blob;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const runs = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 9);
  const { Kube, ROOT, startCluster } = await import("./kube.ts");
  const { startBenchGit } = await import("./git.ts");
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const dir = mkdtempSync(join(tmpdir(), "plumb-snapshot-probe-"));
  const { entry } = await buildCli();
  const bundle = join(dir, "cli.cjs");
  writeFileSync(bundle, probeBundle(readFileSync(join(DIST, entry), "latin1")), "latin1");
  const blobs = {
    lazy: await buildBlob(dir, bundle, false),
    eager: await buildBlob(dir, bundle, true),
  };
  for (const [k, b] of Object.entries(blobs))
    log(`${k} blob: ${(statSync(b).size / 2 ** 20).toFixed(1)} MiB`);
  const cluster = startCluster(log);
  const git = await startBenchGit();
  const ns = `bench-snap-${Date.now().toString(36)}`;
  try {
    const kube = new Kube(cluster.kubeconfig);
    await kube.installCrd();
    const bin = join(ROOT, "functions/plumb.mjs");
    const repo = await git.createRepo(ns, guestbook.files());
    await kube.namespace(ns);
    await kube.createApp(ns, "guestbook", {
      source: { git: { url: repo.url, ref: "main" } },
      interval: "1h",
    });
    const args = ["reconcile", `${ns}/guestbook`, "--kubeconfig", cluster.kubeconfig];
    for (let i = 0, quiet = 0; i < 30 && quiet < 3; i++) {
      const s = await timeProcess(bin, args);
      quiet = s.exit === 0 && s.writes === 0 ? quiet + 1 : 0;
      if (quiet < 3) await new Promise((r) => setTimeout(r, 300));
    }
    // timeProcess runs `node FIRST ...REST`: the snapshot's flag takes FIRST's place.
    const cases: [string, () => ReturnType<typeof timeProcess>][] = [
      ["bin (vm.Script + code cache)", () => timeProcess(bin, args)],
      ["snapshot, lazy", () => timeProcess("--snapshot-blob", [blobs.lazy, ...args])],
      [
        "snapshot, every function compiled",
        () => timeProcess("--snapshot-blob", [blobs.eager, ...args]),
      ],
      ["node -e 0", () => timeProcess("-e", ["0"])],
    ];
    const samples = new Map(cases.map(([k]) => [k, [] as { cpu: number; rss: number }[]]));
    for (let i = 0; i < runs; i++) {
      for (const [k, f] of cases) {
        const s = await f();
        if (s.exit !== 0 || (k !== "node -e 0" && s.writes !== 0))
          throw new Error(`${k}: exit ${s.exit}, ${s.writes} writes`);
        samples.get(k)!.push({ cpu: s.cpuMs, rss: s.peakMiB });
      }
    }
    const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
    console.log(`no-op reconcile of guestbook, interleaved, p50 of ${runs}; load average ${load}`);
    for (const [k, xs] of samples) {
      const cpu = xs.map((x) => x.cpu);
      console.log(
        `${k.padEnd(36)} CPU ${ms(p50(cpu))} (${ms(Math.min(...cpu))}–${ms(Math.max(...cpu))}), peak RSS ${p50(xs.map((x) => x.rss)).toFixed(1)} MiB`,
      );
    }
    if (!cluster.owned) await kube.cleanup([ns]);
  } finally {
    await git.stop();
    if (cluster.owned) cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
