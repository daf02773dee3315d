// The DestinationPort's decisions over a recording transport: what a kubeconfig from a Secret
// may ask for, how the probe's answers read, what workerd refuses. Against real API servers:
// test/e2e/remote-cluster.test.ts.
import { describe, expect, it } from "vitest";
import { DestinationError } from "../core/index.ts";
import { createDestinations, fetchDestinationTransport } from "./destinations.ts";
import type { ClusterAccess } from "./kubeconfig.ts";
import { type KubeTransport, KubeTransportError } from "./transport.ts";

const TOKEN = "eyJhbGciOiJSUzI1NiJ9.plumb-remote-token";
const CA = btoa("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");

function kubeconfig(user: string, cluster = `certificate-authority-data: ${CA}`): string {
  return `apiVersion: v1
kind: Config
current-context: b
clusters: [{name: b, cluster: {server: "https://b.example:6443", ${cluster}}}]
users: [{name: plumb, user: ${user}}]
contexts: [{name: b, context: {cluster: b, user: plumb}}]
`;
}

/** A transport answering GET /version with `status` (or throwing), recording the accesses. */
function setup(answer: number | Error = 200, allowInsecure = false) {
  const accesses: ClusterAccess[] = [];
  const requests: string[] = [];
  const port = createDestinations({
    transport(access) {
      accesses.push(access);
      const t: KubeTransport = async (method, path) => {
        requests.push(`${method} ${path}`);
        if (answer instanceof Error) throw answer;
        return { status: answer, body: { gitVersion: "v1.35.4" } };
      };
      return t;
    },
    allowInsecureSkipTLSVerify: allowInsecure,
    retry: { maxRetries: 0, sleep: async () => {} },
  });
  return { port, accesses, requests };
}

async function refusal(p: Promise<unknown>): Promise<DestinationError> {
  const e = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(e instanceof DestinationError)) throw new Error(`expected a DestinationError, got ${e}`);
  return e;
}

describe("createDestinations", () => {
  it("a token and CA data: probes GET /version, returns the server and the credentials", async () => {
    const { port, accesses, requests } = setup();
    const remote = await port.connect(kubeconfig(`{token: ${TOKEN}}`), "Secret a/b key value");
    expect(remote.server).toBe("https://b.example:6443");
    expect(remote.credentials).toEqual([TOKEN]);
    expect(requests).toEqual(["GET /version"]);
    expect(remote.requestCounts?.()).toEqual({
      get: 1,
      list: 0,
      create: 0,
      update: 0,
      patch: 0,
      delete: 0,
    });
    expect(accesses[0]?.tls.ca).toEqual({
      data: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
    });
  });

  it.each([
    [
      "an exec plugin",
      `{token: ${TOKEN}, exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}}`,
      'user "plumb": exec is not allowed for this kubeconfig (credential plugins run local commands)',
    ],
    [
      "an auth provider",
      `{auth-provider: {name: oidc, config: {id-token: ${TOKEN}}}}`,
      'user "plumb": auth-provider is not allowed for this kubeconfig',
    ],
    ["a token file", "{tokenFile: /var/run/secrets/token}", "tokenFile is not allowed"],
    [
      "a client key file",
      "{client-certificate: /etc/c.crt, client-key: /etc/c.key}",
      "client-certificate is not allowed",
    ],
  ])("refuses %s before anything is sent, without the token", async (_name, user, message) => {
    const { port, requests } = setup();
    const e = await refusal(port.connect(kubeconfig(user), "Secret a/b key value"));
    expect(e.kind).toBe("invalid");
    expect(e.message).toContain("kubeconfig Secret a/b key value");
    expect(e.message).toContain(message);
    expect(e.message).not.toContain(TOKEN);
    expect(requests).toEqual([]);
  });

  it("a token too short to redact is refused (as source credentials are)", async () => {
    const { port, requests } = setup();
    const e = await refusal(port.connect(kubeconfig("{token: abc}"), "Secret a/b key value"));
    expect(e.message).toBe(
      "kubeconfig Secret a/b key value: the token is too short to be redacted from messages; plumb refuses it (use at least 6 characters)",
    );
    expect(requests).toEqual([]);
  });

  it("insecure-skip-tls-verify only when the cluster-wide setting allows it", async () => {
    const insecure = kubeconfig(`{token: ${TOKEN}}`, "insecure-skip-tls-verify: true");
    const refused = await refusal(setup().port.connect(insecure, "Secret a/b key value"));
    expect(refused.message).toContain("insecure-skip-tls-verify is not allowed");
    const { port, accesses } = setup(200, true);
    await port.connect(insecure, "Secret a/b key value");
    expect(accesses[0]?.tls.insecureSkipVerify).toBe(true);
  });

  it("a malformed kubeconfig says so without quoting it", async () => {
    const e = await refusal(setup().port.connect(`users: [{user: {token: ${TOKEN}`, "Secret a/b"));
    expect(e.kind).toBe("invalid");
    expect(e.message).toMatch(/^kubeconfig Secret a\/b: not YAML or JSON/);
    expect(e.message).not.toContain(TOKEN);
  });

  it.each<[string, number | Error, string]>([
    [
      "401",
      401,
      "GET https://b.example:6443/version: 401 Unauthorized: the kubeconfig's credentials are not accepted",
    ],
    [
      "403",
      403,
      "GET https://b.example:6443/version: 403 Forbidden: the server (or a proxy in front of it) refuses this identity",
    ],
    ["503", 503, "GET https://b.example:6443/version: HTTP 503"],
    [
      "no answer",
      new KubeTransportError("GET", "/version", "connect", "connection refused (ECONNREFUSED)", {
        sent: false,
      }),
      "GET https://b.example:6443/version: connection refused (ECONNREFUSED) (3 attempts in 0.0 s)",
    ],
  ])("unreachable on %s", async (_name, answer, message) => {
    const e = await refusal(setup(answer).port.connect(kubeconfig(`{token: ${TOKEN}}`), "s"));
    expect(e.kind).toBe("unreachable");
    expect(e.message).toBe(message);
  });
});

describe("fetchDestinationTransport (workerd)", () => {
  const made: Array<[string, string]> = [];
  const transport = fetchDestinationTransport((server, token) => {
    made.push([server, token]);
    return async () => ({ status: 200, body: {} });
  });
  const port = createDestinations({ transport });

  it("a bearer token to a publicly trusted server works", async () => {
    const remote = await port.connect(kubeconfig(`{token: ${TOKEN}}`, ""), "Secret a/b key value");
    expect(remote.server).toBe("https://b.example:6443");
    expect(made).toEqual([["https://b.example:6443", TOKEN]]);
  });

  it.each([
    ["CA data", kubeconfig(`{token: ${TOKEN}}`), "certificate-authority-data cannot be used"],
    [
      "a client certificate",
      kubeconfig(`{client-certificate-data: ${CA}, client-key-data: ${CA}}`, ""),
      "client certificates are not supported in Cloudflare Workers (run plumb on Node",
    ],
    [
      "basic auth",
      kubeconfig("{username: u, password: secret-password}", ""),
      "with a bearer token",
    ],
  ])("refuses %s, saying what works", async (_name, content, message) => {
    const e = await refusal(port.connect(content, "Secret a/b key value"));
    expect(e.kind).toBe("invalid");
    expect(e.message).toContain(message);
    expect(e.message).not.toContain("secret-password");
  });
});
