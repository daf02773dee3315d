import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inClusterAccess, loadNodeKubeconfig } from "./node-kubeconfig.ts";

let dir: string;

const kubeconfig = (server: string, user: Record<string, unknown>, context = "main") => `
clusters: [{name: main, cluster: {server: "${server}", certificate-authority: pki/ca.crt}}]
users: [{name: main, user: ${JSON.stringify(user)}}]
contexts: [{name: ${context}, context: {cluster: main, user: main}}]
current-context: ${context}
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "plumb-kubeconfig-"));
  mkdirSync(join(dir, "a"));
  mkdirSync(join(dir, "home/.kube"), { recursive: true });
  writeFileSync(join(dir, "a/config"), kubeconfig("https://a:6443", { token: "from-a" }));
  writeFileSync(join(dir, "b.yaml"), kubeconfig("https://b:6443", { token: "from-b" }, "other"));
  writeFileSync(join(dir, "home/.kube/config"), kubeconfig("https://home:6443", { token: "h" }));
  writeFileSync(join(dir, "broken"), "clusters: [");
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("loadNodeKubeconfig", () => {
  it("merges the files of a KUBECONFIG list, first wins, paths relative to their file", () => {
    const list = [join(dir, "a/config"), join(dir, "b.yaml")].join(delimiter);
    const kc = loadNodeKubeconfig(undefined, { env: { KUBECONFIG: list } });
    expect(kc.files).toEqual([join(dir, "a/config"), join(dir, "b.yaml")]);
    expect(kc.access.server).toBe("https://a:6443");
    expect(kc.access.auth).toEqual({ kind: "token", token: "from-a" });
    expect(kc.access.tls.ca).toEqual({ file: join(dir, "a/pki/ca.crt") });
    // The second file's context is there too: it can be chosen.
    const other = loadNodeKubeconfig(list, { env: {}, context: "other" });
    expect(other.access.context).toBe("other");
  });

  it("takes the path given over $KUBECONFIG, then ~/.kube/config", () => {
    const env = { KUBECONFIG: join(dir, "b.yaml"), HOME: join(dir, "home") };
    expect(loadNodeKubeconfig(join(dir, "a/config"), { env }).access.server).toBe("https://a:6443");
    expect(loadNodeKubeconfig(undefined, { env }).access.server).toBe("https://b:6443");
    expect(loadNodeKubeconfig(undefined, { env: { HOME: join(dir, "home") } }).access.server).toBe(
      "https://home:6443",
    );
  });

  it("names the file that cannot be read or parsed, and says when there is no kubeconfig", () => {
    expect(() => loadNodeKubeconfig(join(dir, "missing"), { env: {} })).toThrow(
      `kubeconfig ${join(dir, "missing")}: cannot read it (ENOENT)`,
    );
    expect(() => loadNodeKubeconfig(join(dir, "broken"), { env: {} })).toThrow(
      new RegExp(`^kubeconfig ${join(dir, "broken")}: not YAML or JSON`),
    );
    expect(() => loadNodeKubeconfig(undefined, { env: { HOME: join(dir, "nohome") } })).toThrow(
      "no kubeconfig: set KUBECONFIG or pass --kubeconfig (in a Pod, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set)",
    );
  });
});

describe("inClusterAccess", () => {
  it("is client-go's InClusterConfig: service host and port, token file, CA and namespace", () => {
    const files: Record<string, string> = {
      "/sa/token": "jwt\n",
      "/sa/namespace": "plumb-system\n",
    };
    const read = (p: string) => {
      const v = files[p];
      if (v === undefined) throw Object.assign(new Error("missing"), { code: "ENOENT" });
      return v;
    };
    const env = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" };
    expect(inClusterAccess(env, read, "/sa")).toEqual({
      context: "in-cluster",
      namespace: "plumb-system",
      server: "https://10.96.0.1:443",
      tls: { ca: { file: "/sa/ca.crt" }, insecureSkipVerify: false },
      auth: { kind: "token", tokenFile: "/sa/token" },
    });
    const v6 = inClusterAccess({ ...env, KUBERNETES_SERVICE_HOST: "fd00::1" }, read, "/sa");
    expect(v6.server).toBe("https://[fd00::1]:443");
    delete files["/sa/token"];
    expect(() => inClusterAccess(env, read, "/sa")).toThrow(
      "in-cluster: cannot read the service account token /sa/token (ENOENT)",
    );
  });
});
