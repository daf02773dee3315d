// The GitPort on the node:http client (what Node runs use) against a real git http-backend.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
  type TestRepo,
} from "../../test/support/git-server.ts";
import { SourceError } from "../core/index.ts";
import { createGitPort } from "./git.ts";
import { createNodeHttpClient } from "./node-http.ts";

// The product's deadline: a loaded machine's slow Git server must not fail the tests that
// expect an answer. The test of the deadline makes a port with a short one.
const port = createGitPort({ http: createNodeHttpClient() });
let server: GitServer;
let repo: TestRepo;
/** Redirects every request to the Git server (another origin: 127.0.0.1 vs localhost). */
let redirector: Server;
let redirectBase: string;
const authSeen: Array<string | undefined> = [];

beforeAll(async () => {
  server = await startGitServer();
  repo = await server.createRepo("node-http", fixtureFiles(join(REAL_FIXTURES, "guestbook")), {
    allowSha1InWant: true,
  });
  redirector = createServer((req, res) => {
    authSeen.push(req.headers.authorization);
    const target = new URL(server.url);
    res.writeHead(req.method === "GET" ? 301 : 308, {
      location: `http://localhost:${target.port}${(req.url ?? "").replace("/moved/", "/")}`,
    });
    res.end();
  });
  await new Promise<void>((r) => redirector.listen(0, "127.0.0.1", r));
  redirectBase = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => redirector.close(r));
  await server.stop();
});

describe("createNodeHttpClient", () => {
  it("resolves a ref and fetches the tree like the fetch client", async () => {
    const head = await repo.head();
    const source = { url: repo.url, ref: "main", path: "." };
    expect(await port.resolve(source, undefined)).toBe(head);
    const files = await port.fetch(source, head, undefined);
    expect(files.map((f) => f.path)).toEqual([
      "guestbook-ui-deployment.yaml",
      "guestbook-ui-svc.yaml",
    ]);
  });

  it("follows redirects and drops Authorization when the origin changes, as fetch does", async () => {
    server.setAuth("u", "p");
    try {
      const source = { url: `${redirectBase}/moved/node-http.git`, ref: "main", path: "." };
      // The redirected request carries no credentials: the Git server answers 401.
      const err = await port.resolve(source, { username: "u", password: "p" }).catch((e) => e);
      expect(err).toBeInstanceOf(SourceError);
      expect(err.message).toMatch(/^authentication failed for/);
      expect(authSeen.at(-1)).toBe(`Basic ${Buffer.from("u:p").toString("base64")}`);
    } finally {
      server.setAuth(undefined);
    }
    const source = { url: `${redirectBase}/moved/node-http.git`, ref: "main", path: "." };
    expect(await port.resolve(source, undefined)).toBe(await repo.head());
  });

  it("ends a request the server never answers at the port's deadline", async () => {
    server.setFault("hang");
    try {
      // The server never answers: only the deadline can end the request, as its message says.
      const quick = createGitPort({ timeoutMs: 3_000, http: createNodeHttpClient() });
      const err = await quick
        .resolve({ url: repo.url, ref: "main", path: "." }, undefined)
        .catch((e) => e);
      expect(err).toMatchObject({ transient: true });
      expect(err.message).toMatch(
        /^timed out after 3000 ms reading http:\/\/127\.0\.0\.1:\d+\/node-http\.git$/,
      );
    } finally {
      server.setFault(undefined);
    }
  });

  it("fails transiently on a refused connection, naming the cause", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const p = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const err = await port
      .resolve({ url: `http://127.0.0.1:${p}/x.git`, ref: "main", path: "." }, undefined)
      .catch((e) => e);
    expect(err).toMatchObject({ transient: true });
    expect(err.message).toContain("ECONNREFUSED");
  });

  it("the call's end aborts nothing that throws later: a hostile server's ERR line fails the resolve, no unhandled error", async () => {
    const pkt = (t: string) => (t.length + 4).toString(16).padStart(4, "0") + t;
    const hostile = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/x-git-upload-pack-advertisement" });
      res.end(`${pkt("# service=git-upload-pack\n")}0000${pkt("ERR access denied\n")}`);
    });
    await new Promise<void>((r) => hostile.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}/r.git`;
    try {
      const failed = await port.resolve({ url, ref: "main", path: "." }, undefined).catch((e) => e);
      expect(failed).toBeInstanceOf(SourceError);
      expect(String(failed.message)).toContain("ERR access denied");
      // The abort at the call's end must not surface as an 'error' event nobody listens to
      // (on the kept-alive socket of the finished request).
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      hostile.closeAllConnections();
      await new Promise((r) => hostile.close(r));
    }
  });
});
