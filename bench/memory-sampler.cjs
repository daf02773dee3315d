// A preload for measuring a CLI process's memory: `NODE_OPTIONS="--require
// bench/memory-sampler.cjs"`. Plain CommonJS so `--require` loads it before the CLI, in any
// Node. Env:
//   PLUMB_PROBE_MEMORY_OUT  a file: at exit, one JSON object with the peak of each
//                           process.memoryUsage() field (bytes), VmHWM (KiB) and the samples
//   PLUMB_PROBE_SAMPLE_MS   the sampling period, ms (default 250)
//   PLUMB_PROBE_HEAP_PROFILE a file: the inspector's sampling heap profile of the whole run,
//                           objects collected by major and minor GCs included (so short-lived
//                           garbage counts: the allocation rate, not what is live at exit)
//   PLUMB_PROBE_HEAP_MINOR=0 leave out what minor GCs collected: what is left is what lived
//                           long enough to be promoted (the old generation's growth)
//   PLUMB_PROBE_HEAP_INTERVAL the profile's mean sampling interval, bytes (default 32768)
//   PLUMB_PROBE_SMAPS=1     also reads /proc/self/smaps every 2 s and keeps, for the reading of
//                           the highest RSS, the resident KiB by mapping (the node binary, other
//                           files, [heap] (malloc's brk), anonymous maps, stacks)
//   PLUMB_PROBE_SNAPSHOT    a file: a heap snapshot at exit (what stays reachable after the runs)
// For finding what a run allocates; bench/heap-profile.ts sums such a profile by module.
const { readFileSync, writeFileSync } = require("node:fs");
const v8 = require("node:v8");

const out = process.env.PLUMB_PROBE_MEMORY_OUT;
const profileOut = process.env.PLUMB_PROBE_HEAP_PROFILE;
const period = Number(process.env.PLUMB_PROBE_SAMPLE_MS ?? 250);
const peak = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
const samples = [];
const t0 = Date.now();

// Each sample: ms since start, rss, heapTotal, heapUsed, external, arrayBuffers, then the size
// of each V8 heap space (bytes, in `spaces` order).
const spaces = v8.getHeapSpaceStatistics().map((s) => s.space_name);
function sample() {
  const m = process.memoryUsage();
  for (const k of Object.keys(peak)) peak[k] = Math.max(peak[k], m[k]);
  samples.push([
    Date.now() - t0,
    m.rss,
    m.heapTotal,
    m.heapUsed,
    m.external,
    m.arrayBuffers,
    ...v8.getHeapSpaceStatistics().map((s) => s.space_size),
  ]);
}

let session;
if (profileOut) {
  const inspector = require("node:inspector");
  session = new inspector.Session();
  session.connect();
  session.post("HeapProfiler.startSampling", {
    samplingInterval: Number(process.env.PLUMB_PROBE_HEAP_INTERVAL ?? 32768),
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: process.env.PLUMB_PROBE_HEAP_MINOR !== "0",
  });
}

if (out) setInterval(sample, period).unref();

let smaps;
function readSmaps() {
  const by = {};
  let rss = 0;
  let name = "";
  for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      const path = head[1];
      name =
        path === ""
          ? "anonymous"
          : path === process.execPath || path.endsWith("/bin/node")
            ? "node binary"
            : path.startsWith("[")
              ? path
              : "other files";
      continue;
    }
    const m = /^Rss:\s+(\d+) kB/.exec(line);
    if (m) {
      by[name] = (by[name] ?? 0) + Number(m[1]);
      rss += Number(m[1]);
    }
  }
  if (!smaps || rss > smaps.rssKiB) smaps = { atMs: Date.now() - t0, rssKiB: rss, byKiB: by };
}
if (out && process.env.PLUMB_PROBE_SMAPS === "1") setInterval(readSmaps, 2000).unref();

process.on("exit", () => {
  if (process.env.PLUMB_PROBE_SNAPSHOT) v8.writeHeapSnapshot(process.env.PLUMB_PROBE_SNAPSHOT);
  if (session) {
    // An in-process session answers synchronously, so this works in an exit handler.
    session.post("HeapProfiler.stopSampling", (err, r) => {
      if (!err) writeFileSync(profileOut, JSON.stringify(r.profile));
    });
  }
  if (out) {
    sample();
    const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"));
    writeFileSync(
      out,
      JSON.stringify({ peak, vmHwmKiB: hwm ? Number(hwm[1]) : undefined, smaps, spaces, samples }),
    );
  }
});
