// Hostile renders: the peak RSS of one CLI run (`plumb reconcile NS/NAME`, a process of its
// own, measured from outside through /proc/<pid>/status VmHWM) on inputs built to take a run
// past its memory ceiling: a Helm chart rendering one ConfigMap of 1,000,000 keys (and six of
// 190,000, each under the 3 MiB object cap), a 200 MB
// compressible values file, a repository holding a 200 MB file no App reads. Used by
// `npm run bench -- --only hostile` and `npm run soak -- --hostile-render`.
// `root` may be another checkout of plumb (the figures before a change).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startGitServer } from "../test/support/git-server.ts";
import type { Kube } from "./kube.ts";

const MB = 1_000_000;
const MiB = 1024 * 1024;

/** One hostile input: the repository's files and the App's spec on it. */
export interface HostileCase {
  name: string;
  what: string;
  files: () => Record<string, string>;
  spec: (url: string, namespace: string) => Record<string, unknown>;
}

const configMap = (name: string, namespace: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\ndata:\n  a: "1"\n`;

const CHART = "apiVersion: v2\nname: hostile\nversion: 0.1.0\n";

/**
 * The three inputs of the fault suite, and the 1,000,000 keys split into documents each under the
 * 3 MiB object cap (what the YAML token caps are for), in the order the report prints them.
 */
export const HOSTILE_CASES: HostileCase[] = [
  {
    name: "helm-1m-keys",
    what: "Helm chart rendering one ConfigMap of 1,000,000 keys (about 16 MB)",
    files: () => ({
      "chart/Chart.yaml": CHART,
      "chart/templates/cm.yaml":
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge\ndata:\n{{- range $i := until 1000000 }}\n  k{{ $i }}: "v"\n{{- end }}\n',
    }),
    spec: (url, namespace) => ({
      source: { git: { url, ref: "main", path: "chart" } },
      destination: { namespace },
    }),
  },
  {
    name: "helm-6x190k-keys",
    what: "Helm chart rendering six ConfigMaps of 190,000 keys (2.6 MB each: under the 3 MiB object cap)",
    files: () => ({
      "chart/Chart.yaml": CHART,
      "chart/templates/cm.yaml":
        '{{- range $d := until 6 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge-{{ $d }}\ndata:\n{{- range $i := until 190000 }}\n  k{{ $i }}: "v"\n{{- end }}\n{{- end }}\n',
    }),
    spec: (url, namespace) => ({
      source: { git: { url, ref: "main", path: "chart" } },
      destination: { namespace },
    }),
  },
  {
    name: "values-200mb",
    what: "Helm chart reading a 200 MB compressible values file",
    files: () => ({
      "chart/Chart.yaml": CHART,
      "chart/templates/cm.yaml":
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: small\ndata:\n  size: "{{ len .Values.big }}"\n',
      "data/values.yaml": `big: "${"x".repeat(200 * MB)}"\n`,
    }),
    spec: (url, namespace) => ({
      source: {
        git: { url, ref: "main", path: "chart" },
        helm: { valuesFiles: ["../data/values.yaml"] },
      },
      destination: { namespace },
    }),
  },
  {
    name: "unread-200mb",
    what: "repository holding a 200 MB compressible file the App does not read",
    files: () => ({
      "apps/web/cm.yaml": configMap("web", "hostile-unread-200mb"),
      "data/blob.txt": "x".repeat(200 * MB),
    }),
    spec: (url, namespace) => ({
      source: { git: { url, ref: "main", path: "apps/web" } },
      destination: { namespace },
    }),
  },
];

export interface HostileResult {
  input: string;
  what: string;
  /** The CLI's exit code. */
  exitCode: number | null;
  /** The App's Ready condition after the run: reason and message (cut to 300 characters). */
  reason: string;
  message: string;
  /** The CLI process's peak resident set (VmHWM), bytes. */
  peakRssBytes: number;
  ceilingBytes: number;
  underCeiling: boolean;
  wallMs: number;
}

/**
 * Runs `node <root>/functions/plumb.mjs reconcile NS/NAME` and samples /proc/<pid>/status every
 * 20 ms; VmHWM is the kernel's own high-water mark of the process's RSS, so a sample taken at
 * any time after the peak holds it (the last one is taken while the process is still there).
 * @returns the exit code and the peak RSS in bytes
 */
export async function peakRssOfCli(
  root: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; peakRssBytes: number; wallMs: number; stderr: string }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [join(root, "functions/plumb.mjs"), ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    if (stderr.length < 20_000) stderr += d.toString();
  });
  let peakKiB = 0;
  const sample = () => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
      const kib = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
      if (kib > peakKiB) peakKiB = kib;
    } catch {
      // Gone already: the last sample stands.
    }
  };
  const timer = setInterval(sample, 20);
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  clearInterval(timer);
  return { code, peakRssBytes: peakKiB * 1024, wallMs: performance.now() - t0, stderr };
}

/** A size in MiB with one decimal. */
export const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

/**
 * Each case of `cases` as a repository on a Git server of its own (git http-backend, in this
 * process: the inputs are too big to hand to the bench's child server) and an App in namespace hostile-<case>, then
 * one CLI run of the checkout at `root` on it, measured by peakRssOfCli. `ceilingBytes` is the
 * ceiling the figures are held against (and, with `setCeiling`, passed as PLUMB_MAX_RUN_MEMORY).
 */
export async function hostileRenders(
  kube: Kube,
  kubeconfig: string,
  options: {
    root: string;
    ceilingBytes: number;
    setCeiling?: boolean;
    cases?: readonly HostileCase[];
    log?: (s: string) => void;
  },
): Promise<HostileResult[]> {
  const out: HostileResult[] = [];
  const env: Record<string, string> = {};
  if (options.setCeiling) env["PLUMB_MAX_RUN_MEMORY"] = String(options.ceilingBytes);
  // The first run of a checkout may build its CLI bundle: not part of any figure.
  await peakRssOfCli(options.root, ["--help"], env);
  const git = await startGitServer();
  try {
    for (const c of options.cases ?? HOSTILE_CASES) {
      const ns = `hostile-${c.name}`;
      // A fresh App (and repository) each time: an App deleted by an earlier run may still be
      // finalizing, and re-creating its name would fail with 409.
      const suffix = Date.now().toString(36);
      const appName = `${c.name}-${suffix}`;
      await kube.namespace(ns);
      const repo = await git.createRepo(`hostile-${appName}`, c.files());
      await kube.createApp(ns, appName, { ...c.spec(repo.url, ns), interval: "1h" });
      options.log?.(`hostile ${c.name}: running the CLI`);
      const run = await peakRssOfCli(
        options.root,
        ["reconcile", `${ns}/${appName}`, "--kubeconfig", kubeconfig],
        env,
      );
      const app = await kube.getApp(ns, appName);
      const ready = app.status?.conditions?.find((x) => x.type === "Ready");
      out.push({
        input: c.name,
        what: c.what,
        exitCode: run.code,
        reason: ready
          ? `${ready.status === "True" ? "" : "not "}Ready: ${ready.reason}`
          : "no condition",
        message: (ready?.message ?? run.stderr).slice(0, 300),
        peakRssBytes: run.peakRssBytes,
        ceilingBytes: options.ceilingBytes,
        underCeiling: run.peakRssBytes <= options.ceilingBytes,
        wallMs: run.wallMs,
      });
      options.log?.(`hostile ${c.name}: ${mib(run.peakRssBytes)} peak RSS, ${out.at(-1)?.reason}`);
    }
  } finally {
    await git.stop();
  }
  return out;
}

/** The table of hostileRenders' results: case, outcome, peak RSS, under the ceiling, condition. */
export function hostileTable(title: string, results: readonly HostileResult[]): string {
  const lines = [title, ""];
  lines.push(
    "| case | outcome | peak RSS | under the ceiling | condition |",
    "|---|---|---|---|---|",
  );
  for (const r of results) {
    const message = r.message.replace(/\|/g, "\\|").replace(/\s+/g, " ");
    lines.push(
      `| ${r.input} | ${r.reason} (exit ${r.exitCode}) | ${mib(r.peakRssBytes)} | ${r.underCeiling ? "yes" : "NO"} (${mib(r.ceilingBytes)}) | ${message} |`,
    );
  }
  return lines.join("\n");
}

/** The target of each hostile render: peak RSS under 600 MB (the render issue's figure). */
export const HOSTILE_TARGET_BYTES = 600 * MB;

/**
 * One target row per hostile render: PASS when the CLI's peak RSS is under 600 MB and the run
 * either synced or was refused with a condition naming the cap it hit (a bare failure, or an
 * exit without a condition, is a MISS whatever the memory).
 */
export function hostileTargets(
  results: readonly HostileResult[],
): Array<{ target: string; measured: string; pass: boolean }> {
  return results.map((r) => {
    const synced = r.reason === "Ready: Synced" || r.reason === "Ready: Reconciled";
    // A refusal names the cap it hit, with its size ("the 67108864-byte cap", "the
    // 524288-token cap").
    const clear = /\b\d+-(byte|token)\b[^.]*\bcap\b/.test(r.message);
    return {
      target: `hostile ${r.input}: peak RSS < 600 MB, Synced or refused naming the cap`,
      measured: `${mib(r.peakRssBytes)} (${(r.peakRssBytes / MB).toFixed(1)} MB), ${r.reason}`,
      pass: r.peakRssBytes < HOSTILE_TARGET_BYTES && (synced || clear),
    };
  });
}
