// Measurement 7 (child process): the render engines on Node — load time, first and warm renders
// of podinfo's dev overlay (Kustomize) and helm-guestbook (Helm), and memory. Prints JSON.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { createNodeEngines } from "../src/engines/node.ts";
import type { RepoFile } from "../src/render/engine.ts";
import { ROOT } from "./kube.ts";
import { summarize } from "./stats.ts";

const WARM = 10;

function files(dir: string, root = dir): RepoFile[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory()
      ? files(p, root)
      : [{ path: relative(root, p).split("\\").join("/"), data: readFileSync(p) }];
  });
}

const kib = (field: string, pid: number | string = "self"): number => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(
    readFileSync(`/proc/${pid}/status`, "utf8"),
  );
  return Number(m?.[1] ?? 0) * 1024;
};

const engines = createNodeEngines();
const overlay = files(join(ROOT, "test/fixtures/real/podinfo-kustomize-overlays"));
const chart = files(join(ROOT, "test/fixtures/real/helm-guestbook"));

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const kustomize = () =>
  engines.kustomize({ files: overlay, path: "deploy/overlays/dev", maxOutputBytes: 20 << 20 });
const kLoad = await time(() => engines.load("kustomize"));
const kFirst = await time(kustomize);
const kWarm: number[] = [];
for (let i = 0; i < WARM; i++) kWarm.push(await time(kustomize));
const objects = (await kustomize()).objects.length;
const kPid = engines.pid("kustomize");
const kHelper = kPid ? { rss: kib("VmRSS", kPid), hwm: kib("VmHWM", kPid) } : undefined;

const helm = () =>
  engines.helm({
    files: chart,
    valuesFiles: [],
    releaseName: "guestbook",
    namespace: "bench",
    maxOutputBytes: 20 << 20,
  });
const hLoad = await time(() => engines.load("helm"));
const hFirst = await time(helm);
const hWarm: number[] = [];
for (let i = 0; i < WARM; i++) hWarm.push(await time(helm));
const manifests = (await helm()).manifests.length;
const pid = engines.pid("helm");
const helper = pid ? { rss: kib("VmRSS", pid), hwm: kib("VmHWM", pid) } : undefined;
await engines.close();

process.stdout.write(
  `${JSON.stringify({
    kustomize: {
      what: "podinfo deploy/overlays/dev",
      objects,
      loadMs: kLoad,
      firstMs: kFirst,
      warmMs: summarize(kWarm),
      helperRss: kHelper?.rss,
      helperPeak: kHelper?.hwm,
    },
    helm: {
      what: "helm-guestbook",
      manifests,
      loadMs: hLoad,
      firstMs: hFirst,
      warmMs: summarize(hWarm),
      helperRss: helper?.rss,
      helperPeak: helper?.hwm,
    },
  })}\n`,
);
process.exit(0);
