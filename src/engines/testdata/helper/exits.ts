// For helper.test.ts: a process that renders once through a HelperProcess and then lets its
// event loop drain, as the CLI does. At exit it prints whether the helper was already reaped.
import { join } from "node:path";
import { HelperProcess } from "../../helper.ts";

const helper = new HelperProcess({
  name: "Fake",
  action: "fake render",
  command: process.execPath,
  args: [join(import.meta.dirname, "fake-helper.mjs"), "ready"],
  renderTimeoutMs: 60_000,
  loadTimeoutMs: 60_000,
  notBuilt: "not built",
});
const response = await helper.render(JSON.stringify({ op: "echo", text: "hi" }));
const pid = helper.pid()!;
process.on("exit", () => {
  let reaped = false;
  try {
    process.kill(pid, 0); // succeeds for a live process and for an unreaped zombie
  } catch {
    reaped = true;
  }
  process.stdout.write(`${JSON.stringify({ response, reaped })}\n`);
});
