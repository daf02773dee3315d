import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestPki, type TestPki } from "../../test/support/tls.ts";
import type { ClusterAccess } from "./kubeconfig.ts";
import { tokenSource } from "./node-kubeconfig.ts";
import { createNodeTransport } from "./node-transport.ts";
import { KubeTransportError } from "./transport.ts";

let pki: TestPki;
let https: Server;
let httpsUrl: string;
let plain: Server;
let plainUrl: string;
let connections = 0;
const sockets = new Set<Socket>();

/** Echoes what it got, as JSON; /hang never answers; /reset closes the connection. */
async function handle(req: IncomingMessage, res: ServerResponse) {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const path = req.url ?? "";
  if (path.startsWith("/hang")) return;
  if (path.startsWith("/reset")) {
    req.socket.destroy();
    return;
  }
  if (path.startsWith("/truncated")) {
    res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
    res.write('{"kind":');
    setTimeout(() => req.socket.destroy(), 20);
    return;
  }
  if (path.startsWith("/split")) {
    // A body in three writes, "é" (2 bytes) and "🚀" (4 bytes) each cut between two of them.
    const bytes = Buffer.from(JSON.stringify({ data: { name: "café 🚀 done" } }));
    const e = bytes.indexOf(Buffer.from("é")) + 1;
    const r = bytes.indexOf(Buffer.from("🚀")) + 2;
    res.writeHead(200, { "content-type": "application/json" });
    res.write(bytes.subarray(0, e));
    setTimeout(() => {
      res.write(bytes.subarray(e, r));
      setTimeout(() => res.end(bytes.subarray(r)), 10);
    }, 10);
    return;
  }
  if (path.startsWith("/status/")) {
    res.writeHead(Number(path.slice(8)), { "retry-after": "3", "content-type": "text/plain" });
    res.end("try later");
    return;
  }
  const peer = (req.socket as TLSSocket).getPeerCertificate?.();
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      method: req.method,
      url: path,
      authorization: req.headers.authorization ?? null,
      accept: req.headers.accept,
      contentType: req.headers["content-type"] ?? null,
      body: Buffer.concat(chunks).toString(),
      client: peer?.subject?.CN ?? null,
    }),
  );
}

function track(server: Server) {
  server.on("connection", (s: Socket) => {
    connections++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.on("secureConnection", () => {});
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  pki = makeTestPki();
  https = createHttpsServer(
    {
      cert: pki.serverCert,
      key: pki.serverKey,
      ca: pki.ca,
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => void handle(req, res),
  );
  track(https);
  httpsUrl = `https://127.0.0.1:${await listen(https)}`;
  plain = createHttpServer((req, res) => void handle(req, res));
  track(plain);
  plainUrl = `http://127.0.0.1:${await listen(plain)}`;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all([https, plain].map((s) => new Promise((r) => s?.close(r))));
  pki?.remove();
});

function access(server: string, over: Partial<ClusterAccess> = {}): ClusterAccess {
  return {
    context: "test",
    namespace: undefined,
    server,
    tls: { ca: { data: pki.ca }, insecureSkipVerify: false },
    auth: { kind: "token", token: "s3cret" },
    ...over,
  };
}
const transportFor = (a: ClusterAccess) =>
  createNodeTransport({ access: a, source: "test", files: [] });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("resolved");
    },
    (e: unknown) => {
      expect(e).toBeInstanceOf(KubeTransportError);
      return e as KubeTransportError;
    },
  );

describe("createNodeTransport", () => {
  it("sends JSON with the bearer token, the CA and the client certificate, over one kept-alive connection", async () => {
    const t = transportFor(
      access(httpsUrl, {
        tls: {
          ca: { data: pki.ca },
          cert: { data: pki.clientCert },
          key: { data: pki.clientKey },
          insecureSkipVerify: false,
        },
      }),
    );
    const before = connections;
    const res = await t("PATCH", "/apis/apps/v1/namespaces/a/deployments/web", {
      body: { spec: { replicas: 2 } },
      contentType: "application/apply-patch+yaml",
      query: { fieldManager: "plumb", labelSelector: "a in (b,c)" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      method: "PATCH",
      url: "/apis/apps/v1/namespaces/a/deployments/web?fieldManager=plumb&labelSelector=a+in+%28b%2Cc%29",
      authorization: "Bearer s3cret",
      accept: "application/json",
      contentType: "application/apply-patch+yaml",
      body: '{"spec":{"replicas":2}}',
      client: "plumb-test",
    });
    await t("GET", "/api/v1/namespaces");
    expect(connections - before).toBe(1);
  });

  it("sends basic credentials, and keeps a non-JSON body and the response headers", async () => {
    const t = transportFor(
      access(plainUrl, { auth: { kind: "basic", username: "u", password: "p" } }),
    );
    expect(((await t("GET", "/x")).body as { authorization: string }).authorization).toBe(
      `Basic ${Buffer.from("u:p").toString("base64")}`,
    );
    const res = await t("GET", "/status/503");
    expect(res).toMatchObject({ status: 503, body: "try later" });
    expect(res.headers?.["retry-after"]).toBe("3");
  });

  it("decodes a body whose multi-byte characters arrive split across chunks", async () => {
    for (const url of [plainUrl, httpsUrl]) {
      const res = await transportFor(access(url))("GET", "/split");
      expect(res.body).toEqual({ data: { name: "café 🚀 done" } });
    }
  });

  it("names the request and a TLS UnknownIssuer when the CA is not the server's", async () => {
    const t = transportFor(
      access(httpsUrl, { tls: { ca: { data: pki.otherCa }, insecureSkipVerify: false } }),
    );
    const err = await failure(t("GET", "/api/v1/namespaces/a/secrets/b"));
    expect(err.kind).toBe("tls");
    expect(err.sent).toBe(false);
    expect(err.message).toMatch(
      /^GET \/api\/v1\/namespaces\/a\/secrets\/b: TLS: the server's certificate is not signed by a trusted CA \(UnknownIssuer; give the cluster's certificate-authority in the kubeconfig\) \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN)\)$/,
    );
  });

  it("checks tls-server-name against the certificate, and skips checks only when told", async () => {
    const wrong = transportFor(
      access(httpsUrl, {
        tls: { ca: { data: pki.ca }, serverName: "api.example.com", insecureSkipVerify: false },
      }),
    );
    const err = await failure(wrong("GET", "/x"));
    expect(err).toMatchObject({ kind: "tls", code: "ERR_TLS_CERT_ALTNAME_INVALID" });
    expect(err.message).toContain("GET /x: TLS: the server's certificate does not name this host");
    const right = transportFor(
      access(httpsUrl, {
        tls: { ca: { data: pki.ca }, serverName: "localhost", insecureSkipVerify: false },
      }),
    );
    expect((await right("GET", "/x")).status).toBe(200);
    const skip = transportFor(access(httpsUrl, { tls: { insecureSkipVerify: true } }));
    expect((await skip("GET", "/x")).status).toBe(200);
  });

  it("says the server does not speak TLS when an https URL points at plain HTTP", async () => {
    const t = transportFor(access(plainUrl.replace("http:", "https:")));
    const err = await failure(t("GET", "/x"));
    expect(err.kind).toBe("tls");
    expect(err.message).toMatch(
      /^GET \/x: TLS handshake failed: the server does not speak TLS \(is it an http:\/\/ server\?\)/,
    );
  });

  it("fails a request with no answer at its timeout, naming it", async () => {
    const t = transportFor(access(plainUrl));
    // The server never answers: only the timeout can end the request, as its message says.
    const err = await failure(t("GET", "/hang/apis/plumb.dev/v1alpha1/apps", { timeoutMs: 200 }));
    expect(err).toMatchObject({ kind: "timeout", sent: true });
    expect(err.message).toBe(
      "GET /hang/apis/plumb.dev/v1alpha1/apps: no answer within 200 ms (timeout)",
    );
  });

  it("reports a reset after the request was sent, and a body cut short", async () => {
    const t = transportFor(access(plainUrl));
    const reset = await failure(t("POST", "/reset", { body: { a: 1 } }));
    expect(reset).toMatchObject({ kind: "reset", sent: true, code: "ECONNRESET" });
    expect(reset.message).toBe("POST /reset: connection reset (ECONNRESET)");
    const cut = await failure(t("GET", "/truncated"));
    expect(cut).toMatchObject({ kind: "reset", sent: true });
    expect(cut.message).toMatch(/^GET \/truncated: /);
  });

  it("reports a refused connection as not sent, with the address", async () => {
    const closed = createHttpServer();
    const port = await listen(closed);
    await new Promise((r) => closed.close(r));
    const t = transportFor(access(`http://127.0.0.1:${port}`));
    const err = await failure(t("POST", "/api/v1/namespaces/a/events", { body: {} }));
    expect(err).toMatchObject({ kind: "connect", sent: false, code: "ECONNREFUSED" });
    expect(err.message).toBe(
      `POST /api/v1/namespaces/a/events: connection refused (ECONNREFUSED 127.0.0.1:${port})`,
    );
  });

  it("fails at creation, naming the file, when a certificate file cannot be read", () => {
    expect(() =>
      transportFor(
        access(httpsUrl, {
          tls: { ca: { file: "/nonexistent/ca.crt" }, insecureSkipVerify: false },
        }),
      ),
    ).toThrow(
      "kubeconfig test: cannot read the certificate-authority /nonexistent/ca.crt (ENOENT)",
    );
  });

  it("reads a token file per request as client-go does", async () => {
    const token = "first";
    const t = createNodeTransport(
      {
        access: access(plainUrl, { auth: { kind: "token", tokenFile: "/sa/token" } }),
        source: "t",
        files: [],
      },
      { readFile: () => `${token}\n` },
    );
    expect(((await t("GET", "/x")).body as { authorization: string }).authorization).toBe(
      "Bearer first",
    );
  });
});

describe("tokenSource", () => {
  it("re-reads the file after 50 s, and after a 401 for a request sent with the old token", () => {
    let now = 0;
    let reads = 0;
    let content = "one\n";
    const ts = tokenSource(
      { tokenFile: "/sa/token" },
      () => {
        reads++;
        return content;
      },
      () => now,
    );
    expect(ts.token()).toBe("one");
    content = "two";
    now = 49_999;
    expect(ts.token()).toBe("one");
    now = 50_000;
    expect(ts.token()).toBe("two");
    content = "three";
    ts.reset(49_000); // a 401 for a request sent before this token was read: keep it
    expect(ts.token()).toBe("two");
    ts.reset(50_000);
    expect(ts.token()).toBe("three");
    expect(reads).toBe(3);
  });

  it("fails clearly on an empty or missing token file; a static token is used as is", () => {
    expect(() => tokenSource({ tokenFile: "/sa/token" }, () => " \n").token()).toThrow(
      "the token file /sa/token is empty",
    );
    expect(() =>
      tokenSource({ tokenFile: "/sa/token" }, () => {
        throw Object.assign(new Error("nope"), { code: "EACCES" });
      }).token(),
    ).toThrow("cannot read the token file /sa/token (EACCES)");
    expect(tokenSource({ token: "fixed" }).token()).toBe("fixed");
  });
});
