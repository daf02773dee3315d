// For bench/engines.ts (a fresh process per sample, as a CLI run starts): load one engine and
// render once, then print {loadMs, renderMs, ok, error} as JSON. argv[2]: kustomize | helm.
import { join } from "node:path";
import { createNodeEngines } from "../src/engines/node.ts";
import { fixtureFiles, REAL_FIXTURES } from "../test/support/git-server.ts";

const engine = process.argv[2] === "helm" ? "helm" : "kustomize";
const files = (dir: string) =>
  Object.entries(fixtureFiles(join(REAL_FIXTURES, dir))).map(([path, content]) => ({
    path,
    data: new TextEncoder().encode(content),
  }));
const engines = createNodeEngines();
let ok = true;
let error: string | undefined;
try {
  await engines.load(engine);
  if (engine === "kustomize") {
    await engines.kustomize({
      files: files("podinfo-kustomize-overlays"),
      path: "deploy/overlays/dev",
      maxOutputBytes: 20 << 20,
    });
  } else {
    await engines.helm({
      files: files("helm-guestbook"),
      valuesFiles: [],
      releaseName: "guestbook",
      namespace: "bench",
      maxOutputBytes: 20 << 20,
    });
  }
} catch (e) {
  ok = false;
  error = e instanceof Error ? e.message : String(e);
}
const s = engines.stats()[engine];
await engines.close();
process.stdout.write(
  `${JSON.stringify({ ok, error, loadMs: s.lastLoadMs, renderMs: s.lastRenderMs })}\n`,
);
