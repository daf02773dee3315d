// One shard of a burst of Flux's shape under a profiler: `node bench/burst-probe.ts N [SHARDS]`
// creates N Apps (bench/burst.ts) on $KUBECONFIG's cluster and runs shard 0 of SHARDS (default 1)
// with PLUMB_PROBE_NODE_OPTIONS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" or "--heap-prof"),
// then prints the process's figures. For finding where a shard's time and memory go.
import { fluxShapeFiles } from "./burst.ts";
import { startBenchGit } from "./git.ts";
import { Kube, pool, ROOT } from "./kube.ts";
import { scaleCli, timedCli } from "./scale-process.ts";

const apps = Number(process.argv[2] ?? 100);
const shards = Number(process.argv[3] ?? 1);
const kubeconfig = process.env["KUBECONFIG"];
if (!kubeconfig)
  throw new Error("set KUBECONFIG to a running cluster (test/cluster/cluster.sh start)");
const kube = new Kube(kubeconfig);
await kube.installCrd();
const git = await startBenchGit();
const ns = `probe-${apps}-${Date.now().toString(36)}`;
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
const args = ["reconcile", "--all", "--namespace", ns, "--shard", `0/${shards}`];
const fig = await timedCli(scaleCli(ROOT), [...args, "--kubeconfig", kubeconfig], {
  NODE_OPTIONS: process.env["PLUMB_PROBE_NODE_OPTIONS"] ?? "",
});
console.log(
  JSON.stringify({ ns, apps, shards, ...fig, errors: fig.errors.slice(0, 3) }, undefined, 1),
);
await git.stop();
process.exit(0);
