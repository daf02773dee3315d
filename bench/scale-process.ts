// The plumb CLI as a whole process, as a CronJob runs it: user + system CPU, peak RSS and wall
// time from /usr/bin/time, and what its JSON lines say (outcomes, API requests by verb).
// PLUMB_SCALE_CLI names another CLI entry file (an older checkout's functions/cli.ts) to measure
// that one on the same cluster: the "before" of the scale figures.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

const exec = promisify(execFile);
const TIME = "/usr/bin/time";

/** One process: its cost and what its lines add up to. */
export interface ProcessFigure {
  cpuMs: number;
  peakMiB: number;
  wallMs: number;
  exit: number;
  /** Lines by outcome (Reconciled, Skipped, Failed...). */
  outcomes: Record<string, number>;
  /** API requests the runs reported, summed: reads (get, list) and writes. */
  reads: number;
  writes: number;
  /** Runs that wrote anything. */
  runsWithWrites: number;
  /** The first few errors the lines carried. */
  errors: string[];
}

/** The CLI measured: PLUMB_SCALE_CLI, else this checkout's functions/cli.ts. */
export function scaleCli(root: string): string {
  return resolve(process.env["PLUMB_SCALE_CLI"] ?? join(root, "functions/cli.ts"));
}

/** Runs `node cli args` under /usr/bin/time and reads its JSON lines. */
export async function timedCli(
  cli: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<ProcessFigure> {
  if (!existsSync(TIME)) throw new Error(`${TIME} not found (apt-get install time)`);
  const dir = mkdtempSync(join(tmpdir(), "plumb-scale-"));
  const out = join(dir, "time");
  try {
    const r = await exec(TIME, ["-f", "%U %S %M %e", "-o", out, process.execPath, cli, ...args], {
      env: { ...process.env, ...env },
      maxBuffer: 256 * 1024 * 1024,
      timeout: 1_800_000,
    }).then(
      (x) => ({ code: 0, stdout: x.stdout }),
      (e: { code?: number; stdout?: string }) => ({ code: e.code ?? -1, stdout: e.stdout ?? "" }),
    );
    const [user = 0, sys = 0, maxKiB = 0, wall = 0] = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .pop()!
      .split(" ")
      .map(Number);
    const fig: ProcessFigure = {
      cpuMs: (user + sys) * 1000,
      peakMiB: maxKiB / 1024,
      wallMs: wall * 1000,
      exit: r.code,
      outcomes: {},
      reads: 0,
      writes: 0,
      runsWithWrites: 0,
      errors: [],
    };
    for (const line of r.stdout.split("\n")) {
      if (!line.startsWith("{")) continue;
      const l = JSON.parse(line) as {
        outcome?: string;
        error?: string;
        requests?: Record<string, number>;
      };
      const outcome = l.outcome ?? "?";
      fig.outcomes[outcome] = (fig.outcomes[outcome] ?? 0) + 1;
      const q = l.requests ?? {};
      const writes =
        (q["create"] ?? 0) + (q["update"] ?? 0) + (q["patch"] ?? 0) + (q["delete"] ?? 0);
      fig.reads += (q["get"] ?? 0) + (q["list"] ?? 0);
      fig.writes += writes;
      if (writes > 0) fig.runsWithWrites++;
      if (l.error && fig.errors.length < 3) fig.errors.push(`${outcome}: ${l.error}`);
    }
    return fig;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
