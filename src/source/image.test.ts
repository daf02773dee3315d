import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BAD_DIGEST,
  REGISTRY_SERVICE,
  startRegistry,
  type TestRegistry,
} from "../../test/support/registry.ts";
import type { ImageSource } from "../app/index.ts";
import { SourceError } from "../core/index.ts";
import type { SourceAuth } from "../reconcile/ports.ts";
import {
  createImagePort,
  MANIFEST_MEDIA_TYPES,
  parseChallenges,
  parseImageReference,
  registryBaseUrl,
} from "./image.ts";

const img = (repository: string, tag = "latest"): ImageSource => ({
  repository,
  tag,
  port: 8080,
  replicas: 1,
});

/** An OCI image manifest whose config digest (and so whose own digest) depends on `n`. */
const manifest = (n: number) => ({
  schemaVersion: 2,
  mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: {
    mediaType: "application/vnd.oci.image.config.v1+json",
    digest: `sha256:${n.toString(16).padStart(64, "0")}`,
    size: 1000 + n,
  },
  layers: [],
});

const DIGEST = /^sha256:[0-9a-f]{64}$/;
/** What an authentication failure adds when no credentials were given. */
const ANONYMOUS =
  ": no credentials were given; the repository may be private (set spec.source.image.secretRef) or may not exist";
const port = createImagePort();

/** The SourceError `promise` rejects with (fails the test when it resolves or throws another). */
async function failure(promise: Promise<unknown>): Promise<SourceError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SourceError);
  return err as SourceError;
}

describe("parseImageReference", () => {
  it.each([
    ["nginx", "registry-1.docker.io", "library/nginx"],
    ["org/web", "registry-1.docker.io", "org/web"],
    ["docker.io/nginx", "registry-1.docker.io", "library/nginx"],
    ["index.docker.io/org/web", "registry-1.docker.io", "org/web"],
    ["docker.io/library/nginx", "registry-1.docker.io", "library/nginx"],
    ["registry.example.com/org/web", "registry.example.com", "org/web"],
    ["ghcr.io/org/team/web-app", "ghcr.io", "org/team/web-app"],
    ["registry.example.com:8443/web", "registry.example.com:8443", "web"],
    ["localhost:5000/web", "localhost:5000", "web"],
    ["localhost/web", "localhost", "web"],
    ["127.0.0.1:5000/web", "127.0.0.1:5000", "web"],
    ["[::1]:5000/org/web", "[::1]:5000", "org/web"],
    ["my_org/web__x/a.b-c--d", "registry-1.docker.io", "my_org/web__x/a.b-c--d"],
    ["registry.example.com", "registry-1.docker.io", "library/registry.example.com"],
  ])("%s → %s %s", (repository, host, name) => {
    expect(parseImageReference(repository)).toEqual({ host, name });
  });

  it.each([
    ["web:1.2", "holds a tag"],
    ["registry.example.com/org/web:1.2", "holds a tag"],
    ["localhost:5000", "holds a tag"],
    [`web@sha256:${"a".repeat(64)}`, "holds a digest"],
    [`ghcr.io/org/web:1@sha256:${"b".repeat(64)}`, "holds a digest"],
    ["user:hunter2@ghcr.io/org/web", 'must not contain "@"'],
    ["https://ghcr.io/org/web", "without a scheme"],
    ["Web", "lower-case"],
    ["org/Web", "lower-case"],
    ["ghcr.io/org//web", "lower-case"],
    ["ghcr.io/", "lower-case"],
    ["/web", "lower-case"],
    ["web/", "lower-case"],
    ["org/web app", "lower-case"],
    ["-web", "lower-case"],
    ["web..x", "lower-case"],
    ["bad_host.example.com/web", "not a valid registry host"],
    ["host.example.com:99999/web", "not a valid registry host"],
    ["[zz]:5000/web", "not a valid registry host"],
    ["a".repeat(256), "longer than 255"],
    ["", "is empty"],
  ])("refuses %j (%s)", (repository, why) => {
    let err: unknown;
    try {
      parseImageReference(repository);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SourceError);
    const e = err as SourceError;
    expect(e.transient).toBe(false);
    expect(e.message).toContain("spec.source.image.repository");
    expect(e.message).toContain(why);
  });

  it("does not echo a repository that may hold credentials", () => {
    expect(() => parseImageReference("bob:hunter2@ghcr.io/org/web")).toThrow(
      /^invalid spec\.source\.image\.repository: it must not contain "@"/,
    );
    try {
      parseImageReference("bob:hunter2@ghcr.io/org/web");
    } catch (e) {
      expect((e as Error).message).not.toContain("hunter2");
    }
  });
});

describe("registryBaseUrl", () => {
  it.each([
    ["registry-1.docker.io", [], "https://registry-1.docker.io"],
    ["ghcr.io", [], "https://ghcr.io"],
    ["localhost", [], "http://localhost"],
    ["localhost:5000", [], "http://localhost:5000"],
    ["127.0.0.1:5000", [], "http://127.0.0.1:5000"],
    ["[::1]:5000", [], "http://[::1]:5000"],
    ["127.0.0.2:5000", [], "https://127.0.0.2:5000"],
    ["registry.internal:5000", ["registry.internal"], "http://registry.internal:5000"],
    ["registry.internal:5000", ["REGISTRY.internal:5000"], "http://registry.internal:5000"],
    ["registry.internal:5001", ["registry.internal:5000"], "https://registry.internal:5001"],
    ["registry.internal.evil.com", ["registry.internal"], "https://registry.internal.evil.com"],
  ])("%s with %j → %s", (host, insecure, url) => {
    expect(registryBaseUrl(host, insecure)).toBe(url);
  });
});

describe("parseChallenges", () => {
  it("reads a Bearer challenge with a comma inside a quoted scope", () => {
    const [c, ...rest] = parseChallenges(
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull,push"',
    );
    expect(rest).toEqual([]);
    expect(c?.scheme).toBe("bearer");
    expect(Object.fromEntries(c?.params ?? [])).toEqual({
      realm: "https://auth.docker.io/token",
      service: "registry.docker.io",
      scope: "repository:library/nginx:pull,push",
    });
  });

  it("reads several challenges, token values and escapes", () => {
    const out = parseChallenges('Basic realm="a \\"b\\"", charset=UTF-8, BEARER realm=x');
    expect(out.map((c) => [c.scheme, Object.fromEntries(c.params)])).toEqual([
      ["basic", { realm: 'a "b"', charset: "UTF-8" }],
      ["bearer", { realm: "x" }],
    ]);
  });

  it("returns nothing for empty or malformed headers", () => {
    expect(parseChallenges("")).toEqual([]);
    expect(parseChallenges("=x")).toEqual([]);
  });
});

describe("resolve against a local registry", () => {
  describe("anonymous", () => {
    let reg: TestRegistry;
    beforeAll(async () => {
      reg = await startRegistry();
    });
    afterAll(async () => {
      await reg.stop();
    });

    it("resolves a tag to the manifest digest with a single HEAD", async () => {
      const digest = reg.push("web", "1.0", manifest(1));
      expect(digest).toMatch(DIGEST);
      reg.requests.length = 0;
      expect(await port.resolve(img(`${reg.host}/web`, "1.0"), undefined)).toBe(digest);
      expect(reg.requests).toEqual(["HEAD /v2/web/manifests/1.0"]);
    });

    it("follows the tag to a new digest after a push", async () => {
      const first = reg.push("moving", "stable", manifest(10));
      expect(await port.resolve(img(`${reg.host}/moving`, "stable"), undefined)).toBe(first);
      const second = reg.push("moving", "stable", manifest(11));
      expect(second).not.toBe(first);
      expect(await port.resolve(img(`${reg.host}/moving`, "stable"), undefined)).toBe(second);
    });

    it("defaults to latest when the schema default applies and takes nested names", async () => {
      const digest = reg.push("org/team/api", "latest", manifest(2));
      expect(await port.resolve(img(`${reg.host}/org/team/api`), undefined)).toBe(digest);
    });

    it("asks for OCI indexes and Docker manifest lists (multi-arch tags pin the index)", async () => {
      const index = reg.push("multi", "oci", {
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.index.v1+json",
        manifests: [
          {
            mediaType: "application/vnd.oci.image.manifest.v1+json",
            digest: `sha256:${"1".repeat(64)}`,
            size: 500,
            platform: { architecture: "amd64", os: "linux" },
          },
        ],
      });
      const list = reg.push("multi", "docker", {
        schemaVersion: 2,
        mediaType: "application/vnd.docker.distribution.manifest.list.v2+json",
        manifests: [],
      });
      const v2 = reg.push("multi", "v2", {
        schemaVersion: 2,
        mediaType: "application/vnd.docker.distribution.manifest.v2+json",
        config: {},
        layers: [],
      });
      expect(await port.resolve(img(`${reg.host}/multi`, "oci"), undefined)).toBe(index);
      expect(await port.resolve(img(`${reg.host}/multi`, "docker"), undefined)).toBe(list);
      expect(await port.resolve(img(`${reg.host}/multi`, "v2"), undefined)).toBe(v2);
    });

    it("ignores credentials the registry does not ask for", async () => {
      const digest = reg.push("web", "creds", manifest(3));
      const auth = { username: "u", password: "p" };
      expect(await port.resolve(img(`${reg.host}/web`, "creds"), auth)).toBe(digest);
    });

    it("reports an unknown tag or repository as not found, permanently", async () => {
      reg.push("web", "1.0", manifest(1));
      const tag = await failure(port.resolve(img(`${reg.host}/web`, "nope"), undefined));
      expect(tag.message).toBe(`image ${reg.host}/web:nope not found`);
      expect(tag.transient).toBe(false);
      const repo = await failure(port.resolve(img(`${reg.host}/ghost`, "1.0"), undefined));
      expect(repo.message).toBe(`image ${reg.host}/ghost:1.0 not found`);
      expect(repo.transient).toBe(false);
    });

    it("treats 5xx and 429 as transient and recovers when the fault clears", async () => {
      const digest = reg.push("web", "flaky", manifest(4));
      try {
        for (const status of [500, 502, 503, 429]) {
          reg.setFault(status);
          const err = await failure(port.resolve(img(`${reg.host}/web`, "flaky"), undefined));
          expect(err.transient).toBe(true);
          expect(err.message).toBe(`registry ${reg.host} answered HTTP ${status} for web:flaky`);
        }
        reg.setFault(400);
        const bad = await failure(port.resolve(img(`${reg.host}/web`, "flaky"), undefined));
        expect(bad.transient).toBe(false);
      } finally {
        reg.setFault(undefined);
      }
      expect(await port.resolve(img(`${reg.host}/web`, "flaky"), undefined)).toBe(digest);
    });

    it("times out transiently when the registry does not answer", async () => {
      reg.push("web", "slow", manifest(5));
      reg.setFault("hang");
      try {
        // The registry never answers: only the deadline can end the read, as the message says.
        const fast = createImagePort({ timeoutMs: 200 });
        const err = await failure(fast.resolve(img(`${reg.host}/web`, "slow"), undefined));
        expect(err.transient).toBe(true);
        expect(err.message).toBe(`timed out after 200 ms reading ${reg.host}/web:slow`);
      } finally {
        reg.setFault(undefined);
      }
    });

    it("refuses an invalid tag before any request", async () => {
      reg.requests.length = 0;
      for (const tag of ["-x", ".x", "a/b", "a:b", "x".repeat(129), "sp ace"]) {
        const err = await failure(port.resolve(img(`${reg.host}/web`, tag), undefined));
        expect(err.transient).toBe(false);
        expect(err.message).toContain("invalid spec.source.image.tag");
      }
      expect(reg.requests).toEqual([]);
    });

    it("is transient when nothing listens", async () => {
      const gone = await startRegistry();
      await gone.stop();
      const err = await failure(port.resolve(img(`${gone.host}/web`), undefined));
      expect(err.transient).toBe(true);
      expect(err.message).toContain(`could not read ${gone.host}/web:latest`);
    });
  });

  describe("without Docker-Content-Digest", () => {
    let reg: TestRegistry;
    beforeAll(async () => {
      reg = await startRegistry({ omitDigestHeader: true });
    });
    afterAll(async () => {
      await reg.stop();
    });

    it("GETs the manifest and hashes its bytes", async () => {
      const digest = reg.push("web", "1.0", manifest(1));
      reg.requests.length = 0;
      expect(await port.resolve(img(`${reg.host}/web`, "1.0"), undefined)).toBe(digest);
      expect(reg.requests).toEqual(["HEAD /v2/web/manifests/1.0", "GET /v2/web/manifests/1.0"]);
      const moved = reg.push("web", "1.0", manifest(2));
      expect(await port.resolve(img(`${reg.host}/web`, "1.0"), undefined)).toBe(moved);
    });
  });

  describe("with a hostile digest header", () => {
    let reg: TestRegistry;
    beforeAll(async () => {
      reg = await startRegistry({ badDigest: true });
    });
    afterAll(async () => {
      await reg.stop();
    });

    it("refuses it permanently", async () => {
      reg.push("web", "1.0", manifest(1));
      const err = await failure(port.resolve(img(`${reg.host}/web`, "1.0"), undefined));
      expect(err.transient).toBe(false);
      expect(err.message).toBe(
        `registry ${reg.host} sent a malformed Docker-Content-Digest for web:1.0 (want sha256:<64 lower-case hex>); refused`,
      );
      expect(err.message).not.toContain(BAD_DIGEST);
    });
  });

  describe("bearer token auth, anonymous", () => {
    let reg: TestRegistry;
    beforeAll(async () => {
      reg = await startRegistry({ auth: "bearer" });
    });
    afterAll(async () => {
      await reg.stop();
    });

    it("gets an anonymous token for the challenge's scope and retries", async () => {
      const digest = reg.push("org/web", "1.0", manifest(1));
      reg.requests.length = 0;
      expect(await port.resolve(img(`${reg.host}/org/web`, "1.0"), undefined)).toBe(digest);
      expect(reg.requests).toEqual([
        "HEAD /v2/org/web/manifests/1.0",
        `GET /token?service=${REGISTRY_SERVICE}&scope=repository%3Aorg%2Fweb%3Apull`,
        "HEAD /v2/org/web/manifests/1.0",
      ]);
    });
  });

  describe("bearer token auth with credentials", () => {
    let reg: TestRegistry;
    let omit: TestRegistry;
    beforeAll(async () => {
      reg = await startRegistry({ auth: "bearer", username: "alice", password: "s3cret-pw" });
      omit = await startRegistry({
        auth: "bearer",
        username: "alice",
        password: "s3cret-pw",
        omitDigestHeader: true,
        tokenField: "access_token",
      });
    });
    afterAll(async () => {
      await reg.stop();
      await omit.stop();
    });

    it("sends basic credentials to the token endpoint", async () => {
      const digest = reg.push("web", "1.0", manifest(1));
      const auth = { username: "alice", password: "s3cret-pw" };
      expect(await port.resolve(img(`${reg.host}/web`, "1.0"), auth)).toBe(digest);
    });

    it("uses the token for the GET and reads access_token", async () => {
      const digest = omit.push("web", "1.0", manifest(2));
      omit.requests.length = 0;
      const auth = { username: "alice", password: "s3cret-pw" };
      expect(await port.resolve(img(`${omit.host}/web`, "1.0"), auth)).toBe(digest);
      expect(omit.requests.map((r) => r.split("?")[0])).toEqual([
        "HEAD /v2/web/manifests/1.0",
        "GET /token",
        "HEAD /v2/web/manifests/1.0",
        "GET /v2/web/manifests/1.0",
      ]);
    });

    it("takes a token as the password, with the Secret's username", async () => {
      const digest = reg.push("web", "tok", manifest(3));
      expect(
        await port.resolve(img(`${reg.host}/web`, "tok"), {
          username: "alice",
          token: "s3cret-pw",
        }),
      ).toBe(digest);
    });

    it("fails authentication without the password in the message", async () => {
      reg.push("web", "1.0", manifest(1));
      for (const auth of [
        { username: "alice", password: "wrong-pw-1234" },
        { token: "wrong-pw-1234" },
        undefined,
      ] satisfies (SourceAuth | undefined)[]) {
        const err = await failure(port.resolve(img(`${reg.host}/web`, "1.0"), auth));
        expect(err.transient).toBe(false);
        expect(err.message).toBe(
          `authentication failed for ${reg.host}/web (HTTP 401)${auth ? "" : ANONYMOUS}`,
        );
        expect(err.message).not.toContain("wrong-pw-1234");
      }
    });
  });

  describe("basic auth", () => {
    let reg: TestRegistry;
    let tokenReg: TestRegistry;
    beforeAll(async () => {
      reg = await startRegistry({ auth: "basic", username: "bob", password: "hunter2-long" });
      tokenReg = await startRegistry({
        auth: "basic",
        username: "oauth2accesstoken",
        password: "ya29.token-value",
      });
    });
    afterAll(async () => {
      await reg.stop();
      await tokenReg.stop();
    });

    it("answers a Basic challenge with the credentials", async () => {
      const digest = reg.push("team/web", "2.0", manifest(7));
      reg.requests.length = 0;
      const auth = { username: "bob", password: "hunter2-long" };
      expect(await port.resolve(img(`${reg.host}/team/web`, "2.0"), auth)).toBe(digest);
      expect(reg.requests).toEqual([
        "HEAD /v2/team/web/manifests/2.0",
        "HEAD /v2/team/web/manifests/2.0",
      ]);
    });

    it("sends a bare token as oauth2accesstoken:<token>", async () => {
      const digest = tokenReg.push("web", "1.0", manifest(8));
      expect(
        await port.resolve(img(`${tokenReg.host}/web`, "1.0"), { token: "ya29.token-value" }),
      ).toBe(digest);
    });

    it("fails authentication with wrong or missing credentials", async () => {
      reg.push("web", "1.0", manifest(1));
      const wrong = await failure(
        port.resolve(img(`${reg.host}/web`, "1.0"), { username: "bob", password: "hunter3-long" }),
      );
      expect(wrong.message).toBe(`authentication failed for ${reg.host}/web (HTTP 401)`);
      expect(wrong.message).not.toContain("hunter3-long");
      expect(wrong.transient).toBe(false);
      reg.requests.length = 0;
      const none = await failure(port.resolve(img(`${reg.host}/web`, "1.0"), undefined));
      expect(none.message).toBe(`authentication failed for ${reg.host}/web (HTTP 401)${ANONYMOUS}`);
      expect(reg.requests).toHaveLength(1);
    });
  });
});

/** A fetch double: answers with `handler`, records each request's method, URL and headers. */
function fakeFetch(handler: (url: URL, init: RequestInit) => Response | Promise<Response>) {
  const calls: { method: string; url: string; headers: Headers }[] = [];
  const fn = (async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const url = new URL(String(input));
    calls.push({ method: init.method ?? "GET", url: url.href, headers: new Headers(init.headers) });
    return handler(url, init);
  }) as typeof fetch;
  return { fn, calls };
}

const OK_DIGEST = `sha256:${"ab".repeat(32)}`;

describe("resolve with a fetch double", () => {
  it("asks Docker Hub over https for library/ names, with every manifest media type", async () => {
    const { fn, calls } = fakeFetch(
      () => new Response(null, { status: 200, headers: { "docker-content-digest": OK_DIGEST } }),
    );
    expect(await createImagePort({ fetch: fn }).resolve(img("nginx", "1.27"), undefined)).toBe(
      OK_DIGEST,
    );
    expect(calls).toHaveLength(1);
    expect(calls[0]?.method).toBe("HEAD");
    expect(calls[0]?.url).toBe("https://registry-1.docker.io/v2/library/nginx/manifests/1.27");
    const accept = calls[0]?.headers.get("accept") ?? "";
    for (const type of MANIFEST_MEDIA_TYPES) expect(accept).toContain(type);
    expect(MANIFEST_MEDIA_TYPES).toHaveLength(4);
  });

  it("uses http for insecureHosts and https otherwise", async () => {
    const { fn, calls } = fakeFetch(
      () => new Response(null, { status: 200, headers: { "docker-content-digest": OK_DIGEST } }),
    );
    await createImagePort({ fetch: fn, insecureHosts: ["registry.internal"] }).resolve(
      img("registry.internal:5000/web", "1"),
      undefined,
    );
    await createImagePort({ fetch: fn }).resolve(img("registry.internal:5000/web", "1"), undefined);
    await createImagePort({ fetch: fn }).resolve(img("localhost:5000/web", "1"), undefined);
    expect(calls.map((c) => c.url)).toEqual([
      "http://registry.internal:5000/v2/web/manifests/1",
      "https://registry.internal:5000/v2/web/manifests/1",
      "http://localhost:5000/v2/web/manifests/1",
    ]);
  });

  it("does Docker Hub's token dance: realm on another host, basic creds there, bearer back", async () => {
    const { fn, calls } = fakeFetch((url, init) => {
      const authz = new Headers(init.headers).get("authorization");
      if (url.host === "auth.docker.io") {
        return Response.json({ token: "hub-token.abc", access_token: "other", expires_in: 300 });
      }
      if (authz === "Bearer hub-token.abc") {
        return new Response(null, { status: 200, headers: { "docker-content-digest": OK_DIGEST } });
      }
      return new Response(null, {
        status: 401,
        headers: {
          "www-authenticate":
            'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:org/web:pull"',
        },
      });
    });
    const auth = { username: "dockeruser", password: "dckr_pat_xyz" };
    expect(await createImagePort({ fetch: fn }).resolve(img("org/web", "v1"), auth)).toBe(
      OK_DIGEST,
    );
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      "HEAD https://registry-1.docker.io/v2/org/web/manifests/v1",
      "GET https://auth.docker.io/token?service=registry.docker.io&account=dockeruser&scope=repository%3Aorg%2Fweb%3Apull",
      "HEAD https://registry-1.docker.io/v2/org/web/manifests/v1",
    ]);
    expect(calls[1]?.headers.get("authorization")).toBe(`Basic ${btoa("dockeruser:dckr_pat_xyz")}`);
    expect(calls[0]?.headers.get("authorization")).toBeNull();
  });

  it.each([
    ['Bearer realm="file:///etc/passwd"', 'scheme "file:"'],
    ['Bearer realm="http://auth.example.com/token"', 'scheme "http:"'],
    ['Bearer realm="https://u:p@auth.example.com/token"', "userinfo"],
    ['Bearer service="x"', "without a valid realm"],
  ])("refuses the challenge %s", async (challenge, why) => {
    const { fn, calls } = fakeFetch(
      () => new Response(null, { status: 401, headers: { "www-authenticate": challenge } }),
    );
    const err = await failure(
      createImagePort({ fetch: fn }).resolve(img("ghcr.io/org/web"), { token: "ghp_secret" }),
    );
    expect(err.transient).toBe(false);
    expect(err.message).toContain(why);
    expect(err.message).not.toContain("ghp_secret");
    expect(calls).toHaveLength(1);
  });

  it.each([
    [
      "an oversized token response",
      () => Response.json({ token: "x".repeat(70_000) }),
      "larger than 65536 bytes",
    ],
    ["a token with a newline", () => Response.json({ token: "a\nb" }), "malformed token"],
    ["no token", () => Response.json({ nope: 1 }), "sent no token"],
    ["non-JSON", () => new Response("<html>"), "not JSON"],
  ])("refuses %s from the token service", async (_, tokenResponse, why) => {
    const { fn } = fakeFetch((url) =>
      url.pathname === "/token"
        ? tokenResponse()
        : new Response(null, {
            status: 401,
            headers: { "www-authenticate": 'Bearer realm="https://ghcr.io/token"' },
          }),
    );
    const err = await failure(
      createImagePort({ fetch: fn }).resolve(img("ghcr.io/org/web"), undefined),
    );
    expect(err.transient).toBe(false);
    expect(err.message).toContain(why);
  });

  it("maps token-service 5xx to transient and 401 to authentication failed", async () => {
    for (const [status, transient, message] of [
      [503, true, "token service ghcr.io answered HTTP 503 for ghcr.io/org/web"],
      [401, false, "authentication failed for ghcr.io/org/web (HTTP 401)"],
    ] as const) {
      const { fn } = fakeFetch((url) =>
        url.pathname === "/token"
          ? new Response("no", { status })
          : new Response(null, {
              status: 401,
              headers: { "www-authenticate": 'Bearer realm="https://ghcr.io/token"' },
            }),
      );
      const err = await failure(
        createImagePort({ fetch: fn }).resolve(img("ghcr.io/org/web"), { token: "ghp_x" }),
      );
      expect([err.transient, err.message]).toEqual([transient, message]);
    }
  });

  it("refuses a bearer token the registry still rejects, without retrying again", async () => {
    const { fn, calls } = fakeFetch((url) =>
      url.pathname === "/token"
        ? Response.json({ token: "tok-123" })
        : new Response(null, {
            status: 401,
            headers: { "www-authenticate": 'Bearer realm="https://ghcr.io/token"' },
          }),
    );
    const err = await failure(
      createImagePort({ fetch: fn }).resolve(img("ghcr.io/org/web"), undefined),
    );
    expect(err.message).toBe(`authentication failed for ghcr.io/org/web (HTTP 401)${ANONYMOUS}`);
    expect(err.message).not.toContain("tok-123");
    expect(calls).toHaveLength(3);
  });

  it("refuses a 403 at once", async () => {
    const { fn } = fakeFetch(() => new Response(null, { status: 403 }));
    const err = await failure(
      createImagePort({ fetch: fn }).resolve(img("ghcr.io/org/web"), undefined),
    );
    expect([err.transient, err.message]).toEqual([
      false,
      `authentication failed for ghcr.io/org/web (HTTP 403)${ANONYMOUS}`,
    ]);
  });

  it.each([
    `sha512:${"a".repeat(128)}`,
    `sha256:${"A".repeat(64)}`,
    `sha256:${"a".repeat(63)}`,
    `sha256:${"a".repeat(64)}x`,
    "sha256:../../../etc/passwd",
  ])("refuses the digest header %s", async (digest) => {
    const { fn } = fakeFetch(
      () => new Response(null, { status: 200, headers: { "docker-content-digest": digest } }),
    );
    const err = await failure(
      createImagePort({ fetch: fn }).resolve(img("ghcr.io/org/web"), undefined),
    );
    expect(err.transient).toBe(false);
    expect(err.message).toContain("malformed Docker-Content-Digest");
  });

  it("hashes a GET body when HEAD is not supported, and caps its size", async () => {
    const body = JSON.stringify(manifest(9));
    const expected = `sha256:${Buffer.from(
      await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body)),
    ).toString("hex")}`;
    const small = fakeFetch((_, init) =>
      init.method === "HEAD" ? new Response(null, { status: 405 }) : new Response(body),
    );
    expect(
      await createImagePort({ fetch: small.fn }).resolve(img("ghcr.io/org/web"), undefined),
    ).toBe(expected);
    expect(small.calls.map((c) => c.method)).toEqual(["HEAD", "GET"]);

    const huge = fakeFetch((_, init) =>
      init.method === "HEAD"
        ? new Response(null, { status: 200 })
        : new Response(
            new ReadableStream({
              pull(controller) {
                controller.enqueue(new Uint8Array(1024 * 1024));
              },
            }),
          ),
    );
    const err = await failure(
      createImagePort({ fetch: huge.fn }).resolve(img("ghcr.io/org/web"), undefined),
    );
    expect(err.transient).toBe(false);
    expect(err.message).toBe(
      "manifest ghcr.io/org/web:latest is larger than 4194304 bytes; refused",
    );
  });

  it("scrubs credentials from network errors and makes them transient", async () => {
    const { fn } = fakeFetch(() => {
      throw new TypeError("fetch failed", {
        cause: Object.assign(new Error("bad header Basic Ym9iOnB3 pw=s3cr3t-pass"), {
          code: "EBAD",
        }),
      });
    });
    const err = await failure(
      createImagePort({ fetch: fn }).resolve(img("ghcr.io/org/web"), {
        username: "bob",
        password: "s3cr3t-pass",
      }),
    );
    expect(err.transient).toBe(true);
    expect(err.message).toBe(
      "could not read ghcr.io/org/web:latest: fetch failed (EBAD bad header Basic Ym9iOnB3 pw=***)",
    );
  });

  it("times out even when the fetch ignores the abort signal", async () => {
    const { fn } = fakeFetch(() => new Promise<Response>(() => {}));
    const err = await failure(
      createImagePort({ fetch: fn, timeoutMs: 50 }).resolve(img("ghcr.io/org/web", "1"), undefined),
    );
    expect([err.transient, err.message]).toEqual([
      true,
      "timed out after 50 ms reading ghcr.io/org/web:1",
    ]);
  });
});
