// Direct API-server helpers shared by the e2e suite, the benchmark and `npm start`.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "yaml";
import type { KubeObject } from "../../src/core/index.ts";
import { createKubePort, DiscoveryCache, type KubeTransport } from "../../src/kube/index.ts";
import { waitFor } from "./wait.ts";

const CRD = resolve(import.meta.dirname, "../../infra/crds/apps.plumb.dev.yaml");

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

/** Applies the committed App CRD (field manager plumb) and waits up to 30 s until it is served. */
export async function installAppCrd(transport: KubeTransport): Promise<void> {
  const kube = createKubePort(transport, { discovery: new DiscoveryCache() });
  await kube.apply(parse(readFileSync(CRD, "utf8")) as KubeObject);
  await waitFor("App CRD served", () => kube.resourceFor("plumb.dev/v1alpha1", "App"), {
    everyMs: 200,
  });
}
