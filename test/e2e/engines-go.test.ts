// The Go side of the engines' wire: `go test` in each Go module of src/engines (their types
// against wire.schema.json, the cases in src/engines/testdata that wire.test.ts reads too, the
// helper protocol). Here rather than in the unit project because it needs Go and the engines'
// modules, which the e2e global setup has just built (the tests reuse those compiled packages).
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

describe("the engines' Go tests", () => {
  it("pass in src/engines/protocol, kustomize and helm", { timeout: 900_000 }, async () => {
    const { stderr } = await promisify(execFile)(
      "bash",
      [join(ROOT, "scripts/build-engines.sh"), "--test"],
      { maxBuffer: 16 * 1024 * 1024 },
    ).catch((e: { stdout: string; stderr: string }) => {
      throw new Error(`go test failed:\n${e.stdout}\n${e.stderr}`);
    });
    for (const m of ["protocol", "kustomize", "helm"]) {
      expect(stderr).toContain(`go test in src/engines/${m}`);
    }
  });
});
