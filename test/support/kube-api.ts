// Direct API-server helpers shared by the e2e suite, the benchmark and `npm start`.
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "yaml";
import type { KubeObject } from "../../src/core/index.ts";
import { createKubePort, DiscoveryCache, type KubeTransport } from "../../src/kube/index.ts";
import { waitFor } from "./wait.ts";

const CRDS = resolve(import.meta.dirname, "../../infra/crds");

/**
 * Calls the API server through `transport`; returns the parsed body.
 * @throws Error with method, path, status and body for an HTTP error not listed in `allow`
 */
export async function callApi(
  transport: KubeTransport,
  method: string,
  path: string,
  body?: unknown,
  contentType?: string,
  allow: number[] = [],
  // biome-ignore lint/suspicious/noExplicitAny: callers read arbitrary API objects
): Promise<any> {
  const res = await transport(
    method,
    path,
    body === undefined ? {} : { body, ...(contentType ? { contentType } : {}) },
  );
  if (res.status >= 400 && !allow.includes(res.status)) {
    throw new Error(
      `${method} ${path}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
    );
  }
  return res.body;
}

/**
 * Applies the committed CRDs (infra/crds: App, AppPolicy; field manager plumb) and waits up to
 * 30 s until each kind is served.
 */
export async function installAppCrd(transport: KubeTransport): Promise<void> {
  const kube = createKubePort(transport, { discovery: new DiscoveryCache() });
  for (const file of readdirSync(CRDS)
    .filter((f) => f.endsWith(".yaml"))
    .sort()) {
    const crd = parse(readFileSync(resolve(CRDS, file), "utf8")) as KubeObject & {
      spec: { group: string; names: { kind: string }; versions: Array<{ name: string }> };
    };
    await kube.apply(crd);
    const apiVersion = `${crd.spec.group}/${crd.spec.versions[0]!.name}`;
    await waitFor(
      `${crd.spec.names.kind} CRD served`,
      () => kube.resourceFor(apiVersion, crd.spec.names.kind),
      { everyMs: 200 },
    );
  }
}
