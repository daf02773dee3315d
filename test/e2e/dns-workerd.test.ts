// The Cloudflare DNS adapter inside workerd (`wrangler dev`), against the local Cloudflare API.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CloudflareApi, startCloudflareApi } from "../support/cloudflare.ts";
import { waitFor } from "../support/wait.ts";
import { capture, freePort, stopChild } from "../support/workerd.ts";

const ROOT = resolve(import.meta.dirname, "../..");
let api: CloudflareApi;
let stop: () => Promise<void> = async () => {};
let base = "";
let output: () => string = () => "";

beforeAll(async () => {
  api = await startCloudflareApi();
  const port = await freePort();
  const inspector = await freePort();
  const child = spawn(
    process.execPath,
    [
      resolve(ROOT, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      "test/support/dns-worker.ts",
      "--name",
      "plumb-dns-check",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspector),
      "--compatibility-date",
      "2026-11-01",
      "--compatibility-flags",
      "nodejs_compat",
      "--show-interactive-dev-session=false",
      "--var",
      `TOKEN:${api.token}`,
      "--var",
      `ZONE:${api.zoneId}`,
      "--var",
      `BASE:${api.baseURL}`,
    ],
    {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  output = capture(child);
  stop = () => stopChild(child, "SIGINT");
  base = `http://127.0.0.1:${port}`;
  await waitFor(
    "wrangler dev up",
    async () => (await fetch(`${base}/`, { method: "HEAD" }).catch(() => undefined)) !== undefined,
  );
});
afterAll(async () => {
  await stop();
  await api?.stop();
});

describe("the Cloudflare client in workerd", () => {
  it("creates, lists and deletes a record through the official client", async () => {
    api.requests.length = 0;
    const res = await fetch(`${base}/`);
    const body = (await res.json()) as { created?: { id: string }; error?: string };
    expect(body.error, output().slice(-2000)).toBeUndefined();
    expect(res.status).toBe(200);
    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /zones/${api.zoneId}/dns_records`,
      `GET /zones/${api.zoneId}/dns_records`,
      `DELETE /zones/${api.zoneId}/dns_records/${body.created?.id}`,
    ]);
    expect(api.requests.every((r) => r.authorization === `Bearer ${api.token}`)).toBe(true);
    expect(api.records.size).toBe(0);
  });
});
