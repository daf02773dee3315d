// Measurement 5: the Worker bundle, raw and gzipped (wrangler deploy --dry-run).
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { ROOT } from "./kube.ts";

const run = promisify(execFile);

export interface BundleResult {
  file: string;
  rawBytes: number;
  gzipBytes: number;
  /** Every file wrangler wrote, with its size. */
  files: Record<string, number>;
  /** All files wrangler wrote (.js/.mjs/.cjs/.wasm modules), gzipped separately and summed. */
  allGzipBytes: number;
}

/**
 * The bundle of the Worker configured in `config` (wrangler.toml: the main Worker). `onBuilt`
 * gets the path of the main module before the output is removed (the cold start).
 */
export async function bundleSize(
  config = "wrangler.toml",
  onBuilt?: (mainFile: string) => Promise<void>,
): Promise<BundleResult> {
  const out = mkdtempSync(join(tmpdir(), "plumb-bench-bundle-"));
  try {
    await run(
      process.execPath,
      [
        join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
        "deploy",
        "--dry-run",
        "--outdir",
        out,
        "-c",
        config,
      ],
      {
        cwd: ROOT,
        timeout: 180_000,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
      },
    );
    const files: Record<string, number> = {};
    for (const f of readdirSync(out, { recursive: true }) as string[]) {
      const s = statSync(join(out, f));
      if (s.isFile()) files[f] = s.size;
    }
    const main =
      Object.keys(files).find((f) => f === "worker.js" || f === "render-worker.js") ??
      Object.keys(files)
        .filter((f) => f.endsWith(".js"))
        .sort((a, b) => files[b]! - files[a]!)[0];
    if (!main) throw new Error(`no .js in wrangler's output: ${Object.keys(files).join(", ")}`);
    const raw = readFileSync(join(out, main));
    await onBuilt?.(join(out, main));
    let allGzipBytes = 0;
    for (const f of Object.keys(files))
      if (/\.(m?js|cjs|wasm)$/.test(f)) allGzipBytes += gzipSync(readFileSync(join(out, f))).length;
    return {
      file: main,
      rawBytes: raw.length,
      gzipBytes: gzipSync(raw).length,
      files,
      allGzipBytes,
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
