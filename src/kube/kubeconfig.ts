// The kubeconfig format (client-go's clientcmd/api/v1), read from its CONTENT under a policy:
// trusted (the operator's own file: everything, exec plugins and auth providers through
// client-node) or restricted (a kubeconfig from a Secret: no commands, no files, no
// skipped TLS checks). Pure: no I/O; files are returned as paths for the Node loader to read.
import { parse } from "yaml";

/** What a kubeconfig may ask for. Every refusal is a KubeconfigError naming the field. */
export interface KubeconfigPolicy {
  /** users[].user.exec: run a credential plugin (a local command). */
  allowExec: boolean;
  /** users[].user.auth-provider (oidc, gcp, azure): code and network calls of its own. */
  allowAuthProvider: boolean;
  /** clusters[].cluster.insecure-skip-tls-verify: true. */
  allowInsecureSkipTLSVerify: boolean;
  /** Local file paths: certificate-authority, client-certificate, client-key, tokenFile. */
  allowFiles: boolean;
  /** An http:// server (credentials in clear text; kubectl proxy is one). */
  allowPlainHttp: boolean;
  /** clusters[].cluster.proxy-url. */
  allowProxy: boolean;
}

/** The operator's own kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config): as kubectl. */
export const TRUSTED_KUBECONFIG: KubeconfigPolicy = {
  allowExec: true,
  allowAuthProvider: true,
  allowInsecureSkipTLSVerify: true,
  allowFiles: true,
  allowPlainHttp: true,
  allowProxy: true,
};

/** A kubeconfig from an untrusted place (a Secret an App names): data only. */
export const RESTRICTED_KUBECONFIG: KubeconfigPolicy = {
  allowExec: false,
  allowAuthProvider: false,
  allowInsecureSkipTLSVerify: false,
  allowFiles: false,
  allowPlainHttp: false,
  allowProxy: false,
};

/** A malformed kubeconfig or one the policy refuses; the message names the entry and field. */
export class KubeconfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KubeconfigError";
  }
}

/** PEM text given inline (decoded from *-data) or as a file to read. */
export type Pem = { data: string } | { file: string };

/** How to reach and authenticate to one API server: what a transport needs. */
export interface ClusterAccess {
  /** The context used, and its default namespace (undefined when the context sets none). */
  context: string;
  namespace: string | undefined;
  /** https://host[:port][/prefix] or http://…, no trailing slash. */
  server: string;
  tls: {
    ca?: Pem;
    cert?: Pem;
    key?: Pem;
    /** SNI and certificate name to check (tls-server-name), when not the server's host. */
    serverName?: string;
    insecureSkipVerify: boolean;
  };
  /** tokenFile is re-read as client-go does (see node-kubeconfig.ts); it wins over token. */
  auth:
    | { kind: "none" }
    | { kind: "token"; token?: string; tokenFile?: string }
    | { kind: "basic"; username: string; password: string };
  /**
   * Set when the user or cluster needs what only @kubernetes/client-node implements (an exec
   * plugin, an auth provider, a proxy): the Node loader then hands the content to it.
   */
  delegate?: "exec" | "auth-provider" | "proxy-url";
}

/** A parsed kubeconfig document: named entries and the current context. */
export interface KubeconfigDoc {
  clusters: Map<string, Record<string, unknown>>;
  users: Map<string, Record<string, unknown>>;
  contexts: Map<string, Record<string, unknown>>;
  currentContext: string | undefined;
}

/**
 * Parses kubeconfig content (YAML or JSON, read as kubectl does: YAML 1.1). Relative file paths
 * are made absolute with `resolvePath` (client-go: relative to the file that names them).
 * Within one document a repeated name keeps the first entry.
 * @throws KubeconfigError for content that is not a kubeconfig (not a mapping, a list that is
 *   not a list of named entries)
 */
export function parseKubeconfig(
  content: string,
  source: string,
  resolvePath: (path: string) => string = (p) => p,
): KubeconfigDoc {
  let raw: unknown;
  try {
    raw = content.trimStart().startsWith("{")
      ? JSON.parse(content)
      : parse(content, { version: "1.1", maxAliasCount: 50 });
  } catch (err) {
    throw new KubeconfigError(
      `kubeconfig ${source}: not YAML or JSON: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`,
    );
  }
  if (raw === null || raw === undefined) raw = {};
  if (!isMap(raw)) throw new KubeconfigError(`kubeconfig ${source}: not a mapping`);
  const named = (field: "clusters" | "users" | "contexts", inner: string) => {
    const out = new Map<string, Record<string, unknown>>();
    const list = raw[field] ?? [];
    if (!Array.isArray(list))
      throw new KubeconfigError(`kubeconfig ${source}: ${field} is not a list`);
    for (const [i, entry] of list.entries()) {
      if (!isMap(entry) || typeof entry["name"] !== "string" || entry["name"] === "") {
        throw new KubeconfigError(`kubeconfig ${source}: ${field}[${i}] has no name`);
      }
      const body = entry[inner] ?? {};
      if (!isMap(body)) {
        throw new KubeconfigError(
          `kubeconfig ${source}: ${field} "${entry["name"]}": ${inner} is not a mapping`,
        );
      }
      if (!out.has(entry["name"])) out.set(entry["name"], absolutePaths(body, resolvePath));
    }
    return out;
  };
  const current = raw["current-context"];
  return {
    clusters: named("clusters", "cluster"),
    users: named("users", "user"),
    contexts: named("contexts", "context"),
    currentContext: typeof current === "string" && current !== "" ? current : undefined,
  };
}

const PATH_FIELDS = ["certificate-authority", "client-certificate", "client-key", "tokenFile"];

function absolutePaths(
  body: Record<string, unknown>,
  resolvePath: (p: string) => string,
): Record<string, unknown> {
  const out = { ...body };
  for (const f of PATH_FIELDS) {
    const v = out[f];
    if (typeof v === "string" && v !== "") out[f] = resolvePath(v);
  }
  return out;
}

/**
 * Merges documents as client-go merges the files of $KUBECONFIG: for every named cluster, user
 * and context the first file that defines it wins, and so does the first current-context.
 */
export function mergeKubeconfigs(docs: readonly KubeconfigDoc[]): KubeconfigDoc {
  const out: KubeconfigDoc = {
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
    currentContext: undefined,
  };
  for (const d of docs) {
    for (const k of ["clusters", "users", "contexts"] as const) {
      for (const [name, v] of d[k]) if (!out[k].has(name)) out[k].set(name, v);
    }
    out.currentContext ??= d.currentContext;
  }
  return out;
}

/**
 * The access of one context (`context`, else current-context) under `policy`.
 * @throws KubeconfigError when there is no such context, its cluster or user is missing, the
 *   server is not an http(s) URL, a *-data field is not base64 PEM, a certificate comes without
 *   its key, impersonation is asked for (not supported), or the policy refuses a field
 */
export function resolveKubeconfig(
  doc: KubeconfigDoc,
  source: string,
  policy: KubeconfigPolicy,
  context?: string,
): ClusterAccess {
  const name = context ?? doc.currentContext;
  try {
    return resolveAccess(doc, source, policy, name);
  } catch (err) {
    if (err instanceof FieldTypeError) {
      throw new KubeconfigError(`kubeconfig ${source}: context "${name}": ${err.message}`);
    }
    throw err;
  }
}

function resolveAccess(
  doc: KubeconfigDoc,
  source: string,
  policy: KubeconfigPolicy,
  name: string | undefined,
): ClusterAccess {
  const fail = (what: string) => new KubeconfigError(`kubeconfig ${source}: ${what}`);
  if (!name) throw fail("no current-context (and no context given)");
  const ctx = doc.contexts.get(name);
  if (!ctx) throw fail(`context "${name}" not found`);
  const clusterName = str(ctx, "cluster");
  const cluster = clusterName === undefined ? undefined : doc.clusters.get(clusterName);
  if (!cluster) throw fail(`context "${name}": cluster "${clusterName ?? ""}" not found`);
  const userName = str(ctx, "user");
  const user = userName === undefined ? {} : doc.users.get(userName);
  if (!user) throw fail(`context "${name}": user "${userName}" not found`);
  const where = `cluster "${clusterName}"`;
  const who = `user "${userName ?? ""}"`;
  const refuse = (entry: string, field: string, why: string) =>
    fail(`${entry}: ${field} is not allowed for this kubeconfig (${why})`);

  // Cluster: server, TLS.
  const serverText = str(cluster, "server");
  if (!serverText) throw fail(`${where}: no server`);
  let url: URL;
  try {
    url = new URL(serverText);
  } catch {
    throw fail(`${where}: server "${serverText}" is not an http(s) URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw fail(`${where}: server "${serverText}" is not an http(s) URL`);
  }
  if (url.protocol === "http:" && !policy.allowPlainHttp) {
    throw refuse(where, `server ${serverText}`, "plain http sends credentials in clear text");
  }
  const insecure = bool(cluster, "insecure-skip-tls-verify");
  if (insecure && !policy.allowInsecureSkipTLSVerify) {
    throw refuse(where, "insecure-skip-tls-verify", "the server's certificate must be checked");
  }
  const files = (
    entry: string,
    obj: Record<string, unknown>,
    field: string,
  ): string | undefined => {
    const path = str(obj, field);
    if (path && !policy.allowFiles) {
      throw refuse(entry, field, "it names a local file; give the *-data form");
    }
    return path || undefined;
  };
  const pem = (entry: string, obj: Record<string, unknown>, field: string): Pem | undefined => {
    const data = str(obj, `${field}-data`);
    if (data)
      return { data: decodePem(data, () => fail(`${entry}: ${field}-data is not base64 PEM`)) };
    const file = files(entry, obj, field);
    return file ? { file } : undefined;
  };
  const ca = pem(where, cluster, "certificate-authority");
  const serverName = str(cluster, "tls-server-name");
  const proxy = str(cluster, "proxy-url");
  if (proxy && !policy.allowProxy) {
    throw refuse(where, "proxy-url", "requests go to the server directly");
  }

  // User: credentials.
  for (const f of ["as", "as-uid", "as-groups", "as-user-extra"]) {
    if (user[f] !== undefined && user[f] !== null && user[f] !== "") {
      throw fail(`${who}: impersonation (${f}) is not supported`);
    }
  }
  const exec = user["exec"];
  const provider = user["auth-provider"];
  if (exec && provider) throw fail(`${who}: exec and auth-provider cannot be used together`);
  if (exec && !policy.allowExec) {
    throw refuse(who, "exec", "credential plugins run local commands");
  }
  if (provider && !policy.allowAuthProvider) {
    throw refuse(who, "auth-provider", "auth providers run code of their own");
  }
  const cert = pem(who, user, "client-certificate");
  const key = pem(who, user, "client-key");
  if (cert && !key) throw fail(`${who}: client-certificate without client-key`);
  if (key && !cert) throw fail(`${who}: client-key without client-certificate`);
  const token = str(user, "token");
  const tokenFile = files(who, user, "tokenFile");
  const username = str(user, "username");
  const password = str(user, "password");

  let auth: ClusterAccess["auth"] = { kind: "none" };
  if (token || tokenFile) {
    auth = { kind: "token", ...(token ? { token } : {}), ...(tokenFile ? { tokenFile } : {}) };
  } else if (username || password) {
    auth = { kind: "basic", username: username ?? "", password: password ?? "" };
  }
  const tls: ClusterAccess["tls"] = { insecureSkipVerify: insecure };
  if (ca) tls.ca = ca;
  if (cert) tls.cert = cert;
  if (key) tls.key = key;
  if (serverName) tls.serverName = serverName;
  const access: ClusterAccess = {
    context: name,
    namespace: str(ctx, "namespace") || undefined,
    server: serverText.replace(/\/+$/, ""),
    tls,
    auth,
  };
  if (exec) access.delegate = "exec";
  else if (provider) access.delegate = "auth-provider";
  else if (proxy) access.delegate = "proxy-url";
  return access;
}

/**
 * One kubeconfig's content to access, in one call (the entry point for Secrets):
 * parseKubeconfig + resolveKubeconfig.
 */
export function loadKubeconfig(
  content: string,
  policy: KubeconfigPolicy,
  options: { source?: string; context?: string } = {},
): ClusterAccess {
  const source = options.source ?? "(content)";
  return resolveKubeconfig(parseKubeconfig(content, source), source, policy, options.context);
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A string field (undefined when absent); `field` names it in the error. */
function str(obj: Record<string, unknown>, field: string): string | undefined {
  const v = obj[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new FieldTypeError(field, "a string");
  return v;
}

function bool(obj: Record<string, unknown>, field: string): boolean {
  const v = obj[field];
  if (v === undefined || v === null) return false;
  if (typeof v !== "boolean") throw new FieldTypeError(field, "true or false");
  return v;
}

/** A field of the wrong type; resolveKubeconfig adds where it was. */
class FieldTypeError extends Error {
  constructor(field: string, expected: string) {
    super(`${field} is not ${expected}`);
  }
}

/** base64 → PEM text; `bad()` when it does not decode to a PEM block. */
function decodePem(b64: string, bad: () => Error): string {
  let text: string;
  try {
    text = atob(b64.replace(/\s+/g, ""));
  } catch {
    throw bad();
  }
  if (!text.includes("-----BEGIN ")) throw bad();
  return text;
}
