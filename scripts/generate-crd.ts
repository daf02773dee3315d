// npm run generate: writes infra/crds/apps.plumb.dev.yaml and apppolicies.plumb.dev.yaml from
// the zod schemas, and src/engines/wire.schema.json (the engines' wire, read by the Go tests) from src/engines/wire.ts.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderAppSetCrdYaml, renderCrdYaml, renderPolicyCrdYaml } from "../src/app/crd-yaml.ts";
import { wireJsonSchema } from "../src/engines/wire.ts";

const target = new URL("../infra/crds/apps.plumb.dev.yaml", import.meta.url);
writeFileSync(target, renderCrdYaml());
console.log(`wrote ${target.pathname.split("/").slice(-3).join("/")}`);
const policy = new URL("../infra/crds/apppolicies.plumb.dev.yaml", import.meta.url);
writeFileSync(policy, renderPolicyCrdYaml());
console.log(`wrote ${policy.pathname.split("/").slice(-3).join("/")}`);
const appset = new URL("../infra/crds/appsets.plumb.dev.yaml", import.meta.url);
writeFileSync(appset, renderAppSetCrdYaml());
console.log(`wrote ${appset.pathname.split("/").slice(-3).join("/")}`);
const wire = new URL("../src/engines/wire.schema.json", import.meta.url);
writeFileSync(wire, `${JSON.stringify(wireJsonSchema(), null, 2)}\n`);
// In the repository's JSON style, so that `npm run lint` passes on the generated file.
execFileSync(fileURLToPath(new URL("../node_modules/.bin/biome", import.meta.url)), [
  "format",
  "--write",
  fileURLToPath(wire),
]);
console.log(`wrote ${wire.pathname.split("/").slice(-3).join("/")}`);
