// A stand-in for a native engine helper (src/engines/protocol/serve.go), for helper.test.ts:
// it speaks the same JSON lines and misbehaves on request. argv[2]: how it starts:
//   ready            ready at once
//   gated:FILE       ready once FILE exists (the test decides when loading ends)
//   never            never ready
//   protocol2        announces another protocol version
// Requests: {"op":"echo","text":T} answers T as yaml; "hang" never answers; "crash" exits 2
// after writing "boom" to stderr; "garbage" writes a line that is not JSON.
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";

const mode = process.argv[2] ?? "ready";
const say = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
const ready = () => say({ ready: { engine: "fake", protocol: mode === "protocol2" ? 2 : 1 } });

if (mode === "ready" || mode === "protocol2") ready();
else if (mode.startsWith("gated:")) {
  const file = mode.slice("gated:".length);
  const poll = setInterval(() => {
    if (existsSync(file)) {
      clearInterval(poll);
      ready();
    }
  }, 20);
} else if (mode === "never") setInterval(() => {}, 1000);

createInterface({ input: process.stdin }).on("line", (line) => {
  const { id, request } = JSON.parse(line);
  switch (request.op) {
    case "echo":
      return say({ id, response: { ok: true, yaml: request.text } });
    case "hang":
      return;
    case "crash":
      process.stderr.write("boom\n");
      return process.exit(2);
    case "garbage":
      return process.stdout.write("this is not JSON\n");
  }
});
