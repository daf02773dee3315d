import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFetchTransport } from "./fetch-transport.ts";
import { KubeTransportError } from "./transport.ts";

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let body = "";
    for await (const c of req) body += c;
    if (req.url?.startsWith("/prefix/hang")) return;
    res.writeHead(429, { "retry-after": "1", "content-type": "application/json" });
    res.end(
      JSON.stringify({
        url: req.url,
        auth: req.headers.authorization,
        body,
        type: req.headers["content-type"],
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/prefix/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe("createFetchTransport", () => {
  it("sends the bearer token and JSON body under the server's path, and returns headers", async () => {
    const t = createFetchTransport(base, "tok");
    const res = await t("POST", "/api/v1/namespaces/a/events", {
      body: { a: 1 },
      query: { dryRun: "All" },
    });
    expect(res).toEqual({
      status: 429,
      body: {
        url: "/prefix/api/v1/namespaces/a/events?dryRun=All",
        auth: "Bearer tok",
        body: '{"a":1}',
        type: "application/json",
      },
      headers: expect.objectContaining({ "retry-after": "1" }),
    });
  });

  it("ends a request with no answer at its timeout, naming it", async () => {
    const err = await createFetchTransport(base, "tok")("GET", "/hang", { timeoutMs: 100 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(KubeTransportError);
    expect(err).toMatchObject({
      kind: "timeout",
      message: "GET /hang: no answer within 100 ms (timeout)",
    });
  });

  it("names the cause fetch hides in its TypeError", async () => {
    const refused: typeof fetch = async () => {
      throw new TypeError("fetch failed", {
        cause: Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:443"), {
          code: "ECONNREFUSED",
          address: "10.0.0.1",
          port: 443,
        }),
      });
    };
    const err = await createFetchTransport(
      base,
      "tok",
      refused,
    )("GET", "/api").catch((e: unknown) => e);
    expect(err).toMatchObject({
      kind: "connect",
      sent: false,
      message: "GET /api: connection refused (ECONNREFUSED 10.0.0.1:443)",
    });
  });

  it("spells out what workerd hides: a certificate it does not trust, a lost connection", async () => {
    // What workerd's fetch throws when its own log says "TLS handshake failed: invalid peer
    // certificate: UnknownIssuer" (wrangler 4 against the local control plane's private CA).
    const untrusted: typeof fetch = async () => {
      throw new Error("internal error; reference = 8pteevbi2t9km175gtj0op11");
    };
    const tls = await createFetchTransport(
      "https://127.0.0.1:6443",
      "tok",
      untrusted,
    )("GET", "/apis/plumb.dev/v1alpha1/apps").catch((e: unknown) => e);
    expect(tls).toMatchObject({
      kind: "tls",
      sent: false,
      message:
        "GET /apis/plumb.dev/v1alpha1/apps: TLS or connection failure inside workerd (reference 8pteevbi2t9km175gtj0op11): most likely the server's certificate is not publicly trusted (\"invalid peer certificate: UnknownIssuer\" in workerd's log), which a Worker's fetch refuses; reach the API server through a Cloudflare Tunnel or Workers VPC, or for wrangler dev through kubectl proxy (npm run dev:worker)",
    });
    // Over plain http the same words say nothing about certificates.
    const plain = await createFetchTransport(
      "http://127.0.0.1:8001",
      "tok",
      untrusted,
    )("GET", "/api").catch((e: unknown) => e);
    expect(plain).toMatchObject({
      message: "GET /api: internal error; reference = 8pteevbi2t9km175gtj0op11",
    });
    const lost: typeof fetch = async () => {
      throw new Error("Network connection lost.");
    };
    const reset = await createFetchTransport(
      base,
      "tok",
      lost,
    )("GET", "/api").catch((e: unknown) => e);
    expect(reset).toMatchObject({
      kind: "reset",
      message: "GET /api: connection refused or lost (workerd: Network connection lost.)",
    });
  });
});
