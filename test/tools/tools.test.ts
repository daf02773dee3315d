// test/tools/tools.sh finds an installed Chromium that is not on PATH through its Debian package,
// so a minimal PATH neither fails the browser test nor runs apt-get again.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const SCRIPT = resolve(import.meta.dirname, "tools.sh");
const dir = mkdtempSync(join(tmpdir(), "plumb-tools-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A PATH of the programs tools.sh needs, with a dpkg-query that lists `files` for chromium. */
function minimalPath(files: string[]): string {
  const bin = join(dir, `bin-${files.length}`);
  execFileSync("mkdir", ["-p", bin]);
  for (const tool of ["bash", "id", "dirname", "cat", "mkdir"]) {
    const found = execFileSync("bash", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim();
    symlinkSync(found, join(bin, tool));
  }
  const list = join(bin, "dpkg-query");
  writeFileSync(
    list,
    `#!${execFileSync("bash", ["-c", "command -v bash"], { encoding: "utf8" }).trim()}\n[ "$2" = chromium ] && printf '%s\\n' ${files.map((f) => `'${f}'`).join(" ")}\n`,
  );
  chmodSync(list, 0o755);
  return bin;
}

describe("tools.sh chromium", () => {
  it("prints the package's launcher when chromium is installed but not on PATH", () => {
    const launcher = join(dir, "usr/bin/chromium");
    execFileSync("mkdir", ["-p", join(dir, "usr/bin"), join(dir, "usr/share/doc")]);
    writeFileSync(launcher, "#!/bin/sh\n");
    chmodSync(launcher, 0o755);
    const path = minimalPath([join(dir, "usr/share/doc"), launcher]);
    const out = execFileSync("bash", [SCRIPT, "chromium"], {
      encoding: "utf8",
      env: { PATH: path, HOME: dir },
    });
    expect(out.trim()).toBe(launcher);
  });
});
