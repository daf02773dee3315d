// `npm test`: every stage of the test suite — typecheck, lint, unit, e2e — each run even when an
// earlier one failed (a type error must not hide what the e2e tests would say), then one line
// per stage with its result and time. Exit 1 when any stage failed.
//
//   node scripts/test.ts [STAGE...]    (default: all four, in this order)
//
// The tools tests need (promtool, Chromium) are obtained by the vitest projects' global setups
// (test/support/tools.ts), so `npx vitest run` of one file gets them too.
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");

/** The stages, each an npm script of package.json. */
const STAGES = {
  typecheck: "typecheck",
  lint: "lint",
  unit: "test:unit",
  e2e: "test:e2e",
} as const;
type Stage = keyof typeof STAGES;

const isStage = (s: string): s is Stage => Object.hasOwn(STAGES, s);

const asked = process.argv.slice(2);
const unknown = asked.filter((s) => !isStage(s));
if (unknown.length > 0) {
  console.error(
    `scripts/test.ts: unknown stage ${unknown.join(", ")} (stages: ${Object.keys(STAGES).join(", ")})`,
  );
  process.exit(2);
}
const stages = asked.length > 0 ? (asked as Stage[]) : (Object.keys(STAGES) as Stage[]);

/** "12 s", "3 min 4 s". */
function took(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

const results: { stage: Stage; ok: boolean; ms: number }[] = [];
const t0 = Date.now();
for (const stage of stages) {
  console.error(`\nnpm test: ${stage} (npm run ${STAGES[stage]})`);
  const started = Date.now();
  const run = spawnSync("npm", ["run", "--silent", STAGES[stage]], { cwd: ROOT, stdio: "inherit" });
  if (run.error) console.error(`npm test: could not run npm: ${run.error.message}`);
  results.push({ stage, ok: run.status === 0, ms: Date.now() - started });
}

console.error(`\nnpm test: ${took(Date.now() - t0)} in all`);
for (const r of results) {
  console.error(`  ${r.stage.padEnd(9)} ${r.ok ? "passed" : "FAILED"}  ${took(r.ms)}`);
}
process.exitCode = results.every((r) => r.ok) ? 0 : 1;
