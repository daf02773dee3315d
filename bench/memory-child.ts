// Measurement 6 (child process): one first-sync reconcile of an App; prints JSON with the
// baseline and peak memory. Run with --expose-gc; argv: KUBECONFIG NAMESPACE NAME.
import { createKubePort } from "../src/kube/index.ts";
import { nodeKubeTransport } from "../src/kube/node.ts";
import { reconcileApp } from "../src/reconcile/index.ts";
import { createGitPort } from "../src/source/git.ts";

const [kubeconfig, namespace, name] = process.argv.slice(2);
if (!kubeconfig || !namespace || !name) throw new Error("usage: memory-child KUBECONFIG NS NAME");

const gc = (globalThis as { gc?: () => void }).gc;
const ports = {
  kube: createKubePort(nodeKubeTransport(kubeconfig)),
  git: createGitPort(),
  holder: "plumb-bench-memory",
};
gc?.();
await new Promise((r) => setTimeout(r, 100));
gc?.();
const base = process.memoryUsage();
const baseMaxRssKiB = process.resourceUsage().maxRSS;
let peakHeap = base.heapUsed;
let peakRss = base.rss;
let samples = 0;
const sample = () => {
  const m = process.memoryUsage();
  samples++;
  if (m.heapUsed > peakHeap) peakHeap = m.heapUsed;
  if (m.rss > peakRss) peakRss = m.rss;
};
const timer = setInterval(sample, 2);
const t0 = performance.now();
const result = await reconcileApp({ namespace, name }, ports, new Date());
const wallMs = performance.now() - t0;
sample();
clearInterval(timer);
const maxRssKiB = process.resourceUsage().maxRSS;
process.stdout.write(
  `${JSON.stringify({
    outcome: result.outcome,
    error: result.error,
    requests: result.requests,
    wallMs,
    samples,
    baseline: { rss: base.rss, heapUsed: base.heapUsed, maxRSS: baseMaxRssKiB * 1024 },
    peak: { heapUsed: peakHeap, rss: peakRss, maxRSS: maxRssKiB * 1024 },
  })}\n`,
);
process.exit(0);
