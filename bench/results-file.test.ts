import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BEGIN, END } from "./readme.ts";
import type { Results } from "./report.ts";
import { checkoutCommit, writeReadme } from "./results-file.ts";

const results = (date: string, load: number): Results => ({
  date,
  machine: {
    cpus: 2,
    cpuModel: "Test CPU",
    memoryBytes: 2 * 1024 ** 3,
    node: "v24.0.0",
    loadAverageBefore: [load, load, load],
    loadAverageAfter: [load, load, load],
  },
  cluster: { kubeconfig: "", owned: false },
  requests: [],
  timings: [],
  webhook: [],
  cron: [],
  comparison: [],
  targets: [{ target: "a target", measured: `${load} units`, pass: load < 2 }],
  errors: [],
});

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A checkout with a README holding the markers and two results files. */
function checkout(): string {
  const root = mkdtempSync(join(tmpdir(), "plumb-readme-"));
  dirs.push(root);
  mkdirSync(join(root, "bench/results"), { recursive: true });
  writeFileSync(join(root, "README.md"), `# x\n\n${BEGIN}\nstale figures\n${END}\n\nprose\n`);
  for (const [name, load] of [
    ["2026-12-01T10-00-00Z.json", 1.5],
    ["2026-12-02T10-00-00Z.json", 3.25],
  ] as const)
    writeFileSync(
      join(root, "bench/results", name),
      JSON.stringify(results(name.slice(0, 10), load)),
    );
  return root;
}

describe("npm run bench -- --readme", () => {
  it("writes the newest results file's block into README.md, the same on a second run", () => {
    const root = checkout();
    const { source } = writeReadme(root);
    expect(source).toBe("bench/results/2026-12-02T10-00-00Z.json");
    const once = readFileSync(join(root, "README.md"), "utf8");
    expect(once).toContain("Load average (1 / 5 / 15 min): 3.25 / 3.25 / 3.25 at the start");
    expect(once).toContain("| a target | 3.25 units | MISS |");
    expect(once).not.toContain("stale figures");
    expect(once.endsWith(`${END}\n\nprose\n`)).toBe(true);
    writeReadme(root);
    expect(readFileSync(join(root, "README.md"), "utf8")).toBe(once);
  });

  it("reads a named file, by its name in bench/results or by its path", () => {
    const root = checkout();
    writeReadme(root, "2026-12-01T10-00-00Z.json");
    expect(readFileSync(join(root, "README.md"), "utf8")).toContain(
      "| a target | 1.5 units | PASS |",
    );
    const elsewhere = join(root, "..", `${root.split("/").at(-1)}-other.json`);
    dirs.push(elsewhere);
    writeFileSync(elsewhere, JSON.stringify(results("2026-11-30", 0.5)));
    // A file outside the checkout is named without its directory.
    expect(writeReadme(root, elsewhere).source).toBe(elsewhere.split("/").at(-1));
    expect(() => writeReadme(root, "missing.json")).toThrow(
      "--readme: no results file missing.json",
    );
  });

  it("says so when there are no results or no markers", () => {
    const root = checkout();
    rmSync(join(root, "bench/results"), { recursive: true });
    expect(() => writeReadme(root)).toThrow("no results in bench/results");
    const other = checkout();
    writeFileSync(join(other, "README.md"), "# x\n");
    expect(() => writeReadme(other)).toThrow(/no "<!-- bench:begin -->"/);
    expect(readFileSync(join(other, "README.md"), "utf8")).toBe("# x\n");
  });

  it("records the checkout's commit, none outside a Git checkout", () => {
    expect(checkoutCommit(join(import.meta.dirname, ".."))).toMatch(/^[0-9a-f]{7,}(-dirty)?$/);
    expect(checkoutCommit(checkout())).toBeUndefined();
  });
});
