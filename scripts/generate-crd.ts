// npm run generate: writes infra/crds/apps.plumb.dev.yaml from the zod schema.
import { writeFileSync } from "node:fs";
import { renderCrdYaml } from "../src/app/crd-yaml.ts";

const target = new URL("../infra/crds/apps.plumb.dev.yaml", import.meta.url);
writeFileSync(target, renderCrdYaml());
console.log(`wrote ${target.pathname.split("/").slice(-3).join("/")}`);
