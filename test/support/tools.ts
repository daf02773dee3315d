// The programs tests run besides Node (promtool, Chromium), obtained by test/tools/tools.sh:
// built from Go modules or installed from Debian's packages, or a failure that names the
// command to run. Called from the vitest projects' global setups, which hand the paths to the
// tests (`inject("promtool")`): a missing tool fails the run, it never skips a test.
import { spawn } from "node:child_process";
import { isAbsolute, resolve } from "node:path";

/** The tools test/tools/tools.sh knows. */
export type TestTool = "promtool" | "chromium";

const SCRIPT = resolve(import.meta.dirname, "../tools/tools.sh");

/**
 * The absolute path of `tool`, obtaining it first when missing (a first promtool build takes
 * minutes and says every 30 s how far it is: the script's stderr is passed through).
 * @throws Error with the script's last message, which names the command that would install it
 */
export function testTool(tool: TestTool): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn("bash", [SCRIPT, tool], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      process.stderr.write(d);
      err += d;
    });
    child.on("error", fail);
    child.on("close", (code, signal) => {
      const path = out.trim();
      if (code === 0 && isAbsolute(path)) return done(path);
      const said = err
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("tools.sh: "))
        .pop();
      fail(
        new Error(
          said ??
            `test/tools/tools.sh ${tool} exited ${code ?? signal} (printed ${JSON.stringify(path)}, not a path)`,
        ),
      );
    });
  });
}

declare module "vitest" {
  export interface ProvidedContext {
    /** Path of promtool (`promtool check metrics`). */
    promtool: string;
    /** Path of the Chromium that playwright-core drives (e2e only). */
    chromium: string;
  }
}
