// Where a run's allocations come from: `node bench/heap-profile.ts FILE.heapprofile [BUNDLE]`
// sums a sampling heap profile (bench/memory-sampler.cjs with PLUMB_PROBE_HEAP_PROFILE, objects
// collected by GC included, so this is what the run allocated, not what stayed live) by the
// group of the allocating function (bench/process-profile.ts groupOf: a package, plumb's own
// directory, a Node area), then lists the allocating functions and the plumb frames that led
// to them. BUNDLE: the CLI bundle file the profile ran (default: the newest dist/cli/*/cli.cjs of
// this checkout), whose `// path` comments map lines back to modules.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { bundleModules, groupOf } from "./process-profile.ts";

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  id: number;
  children: HeapNode[];
}
interface HeapProfile {
  head: HeapNode;
  samples: Array<{ size: number; nodeId: number }>;
}

const file = process.argv[2];
if (!file) throw new Error("usage: node bench/heap-profile.ts FILE.heapprofile [BUNDLE]");
const bundle =
  process.argv[3] ??
  (() => {
    const root = join(import.meta.dirname, "../dist/cli");
    const builds = readdirSync(root)
      .map((d) => join(root, d, "cli.cjs"))
      .filter((f) => statSync(f, { throwIfNoEntry: false }));
    builds.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
    return builds[0]!;
  })();
const modules = bundleModules(readFileSync(bundle, "utf8"));
const moduleAt = (_url: string, line: number) => modules(line);
const profile = JSON.parse(readFileSync(file, "utf8")) as HeapProfile;

// Each sample's bytes, by node id: selfSize sums the samples of a node.
const byGroup = new Map<string, number>();
const byFn = new Map<string, number>();
const byOwn = new Map<string, number>();
let total = 0;
const where = (n: HeapNode) => {
  const { url, functionName, lineNumber } = n.callFrame;
  const path = url.startsWith("/") || url.startsWith("file://") ? modules(lineNumber) : url;
  return `${functionName || "(anonymous)"} ${path}:${lineNumber + 1}`;
};
const walk = (n: HeapNode, stack: HeapNode[]) => {
  if (n.selfSize > 0) {
    total += n.selfSize;
    const g = groupOf(n.callFrame.url, n.callFrame.functionName, moduleAt, n.callFrame.lineNumber);
    byGroup.set(g, (byGroup.get(g) ?? 0) + n.selfSize);
    byFn.set(where(n), (byFn.get(where(n)) ?? 0) + n.selfSize);
    // The innermost plumb frame on the stack: what of plumb's code asked for it.
    for (let i = stack.length; i >= 0; i--) {
      const f = i === stack.length ? n : stack[i]!;
      const g2 = groupOf(
        f.callFrame.url,
        f.callFrame.functionName,
        moduleAt,
        f.callFrame.lineNumber,
      );
      if (g2.startsWith("plumb ")) {
        const k = where(f);
        byOwn.set(k, (byOwn.get(k) ?? 0) + n.selfSize);
        break;
      }
    }
  }
  for (const c of n.children) walk(c, [...stack, n]);
};
walk(profile.head, []);
const mib = (b: number) => `${(b / 1048576).toFixed(1).padStart(8)} MiB`;
const top = (m: Map<string, number>, n: number) =>
  [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
console.log(`allocated (sampled, GC'd objects included): ${mib(total)}`);
console.log("\nby group:");
for (const [k, v] of top(byGroup, 25))
  console.log(`${mib(v)} ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
console.log("\nallocating functions:");
for (const [k, v] of top(byFn, 40)) console.log(`${mib(v)}  ${k}`);
console.log("\ninnermost plumb frame of each allocation:");
for (const [k, v] of top(byOwn, 40)) console.log(`${mib(v)}  ${k}`);
