import { describe, expect, it } from "vitest";
import {
  KubeconfigError,
  loadKubeconfig,
  mergeKubeconfigs,
  parseKubeconfig,
  RESTRICTED_KUBECONFIG,
  resolveKubeconfig,
  TRUSTED_KUBECONFIG,
} from "./kubeconfig.ts";

const PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const b64 = (s: string) => Buffer.from(s).toString("base64");

/** A one-context kubeconfig with `cluster` and `user` fields. */
function config(
  cluster: Record<string, unknown>,
  user: Record<string, unknown>,
  extra = "",
): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: ${JSON.stringify({ server: "https://10.0.0.1:6443", ...cluster })}
users:
- name: u
  user: ${JSON.stringify(user)}
contexts:
- name: ctx
  context: {cluster: c, user: u, namespace: team-a}
current-context: ctx
${extra}`;
}

const refusal = (content: string) => {
  try {
    loadKubeconfig(content, RESTRICTED_KUBECONFIG, { source: "Secret team-a/remote" });
  } catch (err) {
    expect(err).toBeInstanceOf(KubeconfigError);
    return (err as Error).message;
  }
  throw new Error("accepted");
};

describe("loadKubeconfig", () => {
  it("reads server, CA data, client certificate and key, and the context's namespace", () => {
    const access = loadKubeconfig(
      config(
        { "certificate-authority-data": b64(PEM), "tls-server-name": "api.internal" },
        {
          "client-certificate-data": b64(PEM),
          "client-key-data": b64("-----BEGIN EC PRIVATE KEY-----\nx\n"),
        },
      ),
      RESTRICTED_KUBECONFIG,
    );
    expect(access).toEqual({
      context: "ctx",
      namespace: "team-a",
      server: "https://10.0.0.1:6443",
      tls: {
        ca: { data: PEM },
        cert: { data: PEM },
        key: { data: "-----BEGIN EC PRIVATE KEY-----\nx\n" },
        serverName: "api.internal",
        insecureSkipVerify: false,
      },
      auth: { kind: "none" },
    });
  });

  it("reads a bearer token, basic credentials, and JSON content", () => {
    expect(loadKubeconfig(config({}, { token: "t0k" }), RESTRICTED_KUBECONFIG).auth).toEqual({
      kind: "token",
      token: "t0k",
    });
    expect(
      loadKubeconfig(config({}, { username: "admin", password: "pw" }), RESTRICTED_KUBECONFIG).auth,
    ).toEqual({ kind: "basic", username: "admin", password: "pw" });
    const json = JSON.stringify({
      clusters: [{ name: "c", cluster: { server: "https://k:443/" } }],
      users: [{ name: "u", user: { token: "j" } }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    });
    const access = loadKubeconfig(json, RESTRICTED_KUBECONFIG);
    expect(access.server).toBe("https://k:443");
    expect(access.namespace).toBeUndefined();
  });

  it("picks the context asked for instead of current-context", () => {
    const content = config({}, { token: "a" }).replace(
      "current-context: ctx",
      "- name: other\n  context: {cluster: c, user: u, namespace: other-ns}\ncurrent-context: ctx",
    );
    // The extra context is appended to the contexts list above current-context.
    expect(loadKubeconfig(content, TRUSTED_KUBECONFIG, { context: "other" }).namespace).toBe(
      "other-ns",
    );
    expect(() => loadKubeconfig(content, TRUSTED_KUBECONFIG, { context: "nope" })).toThrow(
      'kubeconfig (content): context "nope" not found',
    );
  });

  it("hands exec plugins, auth providers and proxies to client-node when trusted", () => {
    const exec = { exec: { apiVersion: "client.authentication.k8s.io/v1", command: "aws" } };
    expect(loadKubeconfig(config({}, exec), TRUSTED_KUBECONFIG).delegate).toBe("exec");
    expect(
      loadKubeconfig(config({}, { "auth-provider": { name: "oidc" } }), TRUSTED_KUBECONFIG)
        .delegate,
    ).toBe("auth-provider");
    expect(
      loadKubeconfig(config({ "proxy-url": "http://proxy:3128" }, {}), TRUSTED_KUBECONFIG).delegate,
    ).toBe("proxy-url");
    expect(loadKubeconfig(config({}, { token: "t" }), TRUSTED_KUBECONFIG).delegate).toBeUndefined();
  });

  it("refuses, with the field named, what a kubeconfig from a Secret may not ask for", () => {
    expect(refusal(config({}, { exec: { command: "sh", args: ["-c", "id"] } }))).toBe(
      'kubeconfig Secret team-a/remote: user "u": exec is not allowed for this kubeconfig (credential plugins run local commands)',
    );
    expect(refusal(config({}, { "auth-provider": { name: "gcp" } }))).toBe(
      'kubeconfig Secret team-a/remote: user "u": auth-provider is not allowed for this kubeconfig (auth providers run code of their own)',
    );
    expect(refusal(config({ "insecure-skip-tls-verify": true }, { token: "t" }))).toBe(
      'kubeconfig Secret team-a/remote: cluster "c": insecure-skip-tls-verify is not allowed for this kubeconfig (the server\'s certificate must be checked)',
    );
    expect(refusal(config({ "certificate-authority": "/etc/ssl/ca.pem" }, {}))).toBe(
      'kubeconfig Secret team-a/remote: cluster "c": certificate-authority is not allowed for this kubeconfig (it names a local file; give the *-data form)',
    );
    for (const field of ["client-certificate", "client-key", "tokenFile"]) {
      expect(refusal(config({}, { [field]: "/var/run/secrets/token" }))).toContain(
        `user "u": ${field} is not allowed for this kubeconfig (it names a local file`,
      );
    }
    expect(refusal(config({ server: "http://10.0.0.1:8080" }, { token: "t" }))).toBe(
      'kubeconfig Secret team-a/remote: cluster "c": server http://10.0.0.1:8080 is not allowed for this kubeconfig (plain http sends credentials in clear text)',
    );
    expect(refusal(config({ "proxy-url": "socks5://10.0.0.9:1080" }, { token: "t" }))).toContain(
      'cluster "c": proxy-url is not allowed',
    );
  });

  it("allows in trusted mode what restricted mode refuses, as kubectl does", () => {
    const access = loadKubeconfig(
      config(
        { server: "http://127.0.0.1:8001", "insecure-skip-tls-verify": true },
        { tokenFile: "/var/run/secrets/token" },
      ),
      TRUSTED_KUBECONFIG,
    );
    expect(access.server).toBe("http://127.0.0.1:8001");
    expect(access.tls.insecureSkipVerify).toBe(true);
    expect(access.auth).toEqual({ kind: "token", tokenFile: "/var/run/secrets/token" });
  });

  it("says what is wrong with a malformed kubeconfig", () => {
    const bad = (content: string) => {
      try {
        loadKubeconfig(content, TRUSTED_KUBECONFIG, { source: "k" });
        return "accepted";
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(bad("clusters: [")).toMatch(/^kubeconfig k: not YAML or JSON: /);
    expect(bad("- a\n- b\n")).toBe("kubeconfig k: not a mapping");
    expect(bad("clusters: {a: 1}")).toBe("kubeconfig k: clusters is not a list");
    expect(bad("users: [{user: {}}]")).toBe("kubeconfig k: users[0] has no name");
    expect(bad("")).toBe("kubeconfig k: no current-context (and no context given)");
    expect(bad(config({}, {}).replace("cluster: c,", "cluster: gone,"))).toBe(
      'kubeconfig k: context "ctx": cluster "gone" not found',
    );
    expect(bad(config({}, {}).replace("user: u,", "user: nobody,"))).toBe(
      'kubeconfig k: context "ctx": user "nobody" not found',
    );
    expect(bad(config({ server: "" }, {}))).toBe('kubeconfig k: cluster "c": no server');
    expect(bad(config({ server: "10.0.0.1:6443" }, {}))).toBe(
      'kubeconfig k: cluster "c": server "10.0.0.1:6443" is not an http(s) URL',
    );
    expect(bad(config({ "certificate-authority-data": "not base64!" }, {}))).toBe(
      'kubeconfig k: cluster "c": certificate-authority-data is not base64 PEM',
    );
    expect(bad(config({ "certificate-authority-data": b64("just text") }, {}))).toBe(
      'kubeconfig k: cluster "c": certificate-authority-data is not base64 PEM',
    );
    expect(bad(config({}, { "client-certificate-data": b64(PEM) }))).toBe(
      'kubeconfig k: user "u": client-certificate without client-key',
    );
    expect(bad(config({}, { as: "system:admin" }))).toBe(
      'kubeconfig k: user "u": impersonation (as) is not supported',
    );
    expect(bad(config({}, { token: 42 }))).toBe(
      'kubeconfig k: context "ctx": token is not a string',
    );
    expect(bad(config({ "insecure-skip-tls-verify": "yes please" }, {}))).toBe(
      'kubeconfig k: context "ctx": insecure-skip-tls-verify is not true or false',
    );
  });

  it("reads scalars as kubectl does (YAML 1.1)", () => {
    const access = loadKubeconfig(
      config({}, {}).replace(
        'cluster: {"server":"https://10.0.0.1:6443"}',
        "cluster: {server: 'https://10.0.0.1:6443', insecure-skip-tls-verify: yes}",
      ),
      TRUSTED_KUBECONFIG,
    );
    expect(access.tls.insecureSkipVerify).toBe(true);
  });
});

describe("mergeKubeconfigs", () => {
  it("keeps the first definition of every name and the first current-context (client-go)", () => {
    const a = parseKubeconfig(config({}, { token: "from-a" }), "a");
    const b = parseKubeconfig(
      config({ server: "https://b:6443" }, { token: "from-b" }).replace(
        "current-context: ctx",
        "current-context: other",
      ),
      "b",
    );
    const merged = mergeKubeconfigs([a, b]);
    expect(merged.currentContext).toBe("ctx");
    const access = resolveKubeconfig(merged, "a:b", TRUSTED_KUBECONFIG);
    expect(access.server).toBe("https://10.0.0.1:6443");
    expect(access.auth).toEqual({ kind: "token", token: "from-a" });
    const noContext = parseKubeconfig(config({}, {}).replace("current-context: ctx", ""), "n");
    expect(mergeKubeconfigs([noContext, b]).currentContext).toBe("other");
  });

  it("makes relative file paths absolute against the file that names them", () => {
    const doc = parseKubeconfig(
      config({ "certificate-authority": "pki/ca.crt" }, { tokenFile: "/abs/token" }),
      "k",
      (p) => (p.startsWith("/") ? p : `/home/dev/.kube/${p}`),
    );
    const access = resolveKubeconfig(doc, "k", TRUSTED_KUBECONFIG);
    expect(access.tls.ca).toEqual({ file: "/home/dev/.kube/pki/ca.crt" });
    expect(access.auth).toEqual({ kind: "token", tokenFile: "/abs/token" });
  });
});
