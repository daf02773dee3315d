// Node: where the operator's kubeconfig comes from (a file, the files of $KUBECONFIG, or the
// Pod's service account) and the credentials read from files, with the token file re-read as
// client-go re-reads it.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import {
  type ClusterAccess,
  KubeconfigError,
  type KubeconfigPolicy,
  mergeKubeconfigs,
  parseKubeconfig,
  resolveKubeconfig,
  TRUSTED_KUBECONFIG,
} from "./kubeconfig.ts";

/** Where a Pod's service-account credentials are mounted (client-go rest.InClusterConfig). */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** A resolved kubeconfig and where it came from (files, for client-node when it must take over). */
export interface NodeKubeconfig {
  access: ClusterAccess;
  /** Human-readable origin for messages: the file(s), or "in-cluster service account". */
  source: string;
  /** The kubeconfig files read, in $KUBECONFIG order (empty in-cluster). */
  files: string[];
}

export interface LoadOptions {
  /** Context to use instead of current-context. */
  context?: string;
  policy?: KubeconfigPolicy;
  env?: Record<string, string | undefined>;
  /** File reader (tests); defaults to fs.readFileSync as UTF-8. */
  readFile?: (path: string) => string;
  exists?: (path: string) => boolean;
}

/**
 * Loads the operator's kubeconfig the way kubectl finds it: `path` (a file, or several joined
 * with the path delimiter as in $KUBECONFIG, merged with client-go's first-wins rules); when
 * undefined, $KUBECONFIG, then ~/.kube/config, then the in-cluster service account.
 * @throws KubeconfigError naming the file and the problem (unreadable, malformed, a context,
 *   cluster or user missing, a refused field), or "no kubeconfig" when none of those exists
 */
export function loadNodeKubeconfig(
  path: string | undefined,
  options: LoadOptions = {},
): NodeKubeconfig {
  const env = options.env ?? process.env;
  const read = options.readFile ?? ((p: string) => readFileSync(p, "utf8"));
  const exists = options.exists ?? existsSync;
  const policy = options.policy ?? TRUSTED_KUBECONFIG;
  const list = path ?? env["KUBECONFIG"];
  let files = (list ?? "").split(delimiter).filter(Boolean);
  if (files.length === 0) {
    const home = env["HOME"] || env["USERPROFILE"] || homedir();
    const file = join(home, ".kube", "config");
    if (exists(file)) files = [file];
  }
  if (files.length === 0) {
    const access = inClusterAccess(env, read);
    return { access, source: "in-cluster service account", files: [] };
  }
  const docs = files.map((file) => {
    let content: string;
    try {
      content = read(file);
    } catch (err) {
      const code = (err as { code?: string }).code;
      throw new KubeconfigError(`kubeconfig ${file}: cannot read it (${code ?? String(err)})`);
    }
    const dir = dirname(resolve(file));
    return parseKubeconfig(content, file, (p) => (isAbsolute(p) ? p : join(dir, p)));
  });
  const source = files.join(delimiter);
  const access = resolveKubeconfig(mergeKubeconfigs(docs), source, policy, options.context);
  return { access, source, files };
}

/**
 * The namespace of the kubeconfig's context (kubectl's default namespace; in a Pod, the service
 * account's), or "default" when it names none. `path` as for loadNodeKubeconfig.
 * @throws KubeconfigError as loadNodeKubeconfig does
 */
export function kubeconfigNamespace(path?: string, options: LoadOptions = {}): string {
  return loadNodeKubeconfig(path, options).access.namespace ?? "default";
}

/**
 * client-go's rest.InClusterConfig: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT,
 * the service account's token file (re-read, see tokenSource) and CA, and its namespace.
 * @throws KubeconfigError when not in a Pod (the variables or the token are missing)
 */
export function inClusterAccess(
  env: Record<string, string | undefined>,
  read: (path: string) => string,
  dir = SERVICE_ACCOUNT_DIR,
): ClusterAccess {
  const host = env["KUBERNETES_SERVICE_HOST"];
  const port = env["KUBERNETES_SERVICE_PORT"];
  if (!host || !port) {
    throw new KubeconfigError(
      "no kubeconfig: set KUBECONFIG or pass --kubeconfig (in a Pod, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set)",
    );
  }
  const tokenFile = `${dir}/token`;
  try {
    read(tokenFile);
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw new KubeconfigError(
      `in-cluster: cannot read the service account token ${tokenFile} (${code ?? String(err)})`,
    );
  }
  let namespace: string | undefined;
  try {
    namespace = read(`${dir}/namespace`).trim() || undefined;
  } catch {
    namespace = undefined;
  }
  const hostPart = host.includes(":") ? `[${host}]` : host; // an IPv6 address
  return {
    context: "in-cluster",
    namespace,
    server: `https://${hostPart}:${port}`,
    tls: { ca: { file: `${dir}/ca.crt` }, insecureSkipVerify: false },
    auth: { kind: "token", tokenFile },
  };
}

/** A bearer token that may come from a file. */
export interface TokenSource {
  /** The token to send now (re-read from the file when stale). */
  token(): string;
  /** A 401 came back for a request sent at `sentAt` (ms): a token read before it is stale. */
  reset(sentAt: number): void;
}

/**
 * client-go's cached file token source (transport/token_source.go): the file is read again when
 * the token is older than 50 s (a 1-minute period minus a 10 s leeway), and after a 401 for a
 * request sent with an older token, so a rotated projected service-account token is picked up.
 * Without a file, the static token. Tokens are trimmed; an empty file is an error.
 * @throws KubeconfigError when the file cannot be read or is empty
 */
export function tokenSource(
  auth: { token?: string; tokenFile?: string },
  read: (path: string) => string = (p) => readFileSync(p, "utf8"),
  now: () => number = Date.now,
): TokenSource {
  const file = auth.tokenFile;
  if (!file) {
    const fixed = auth.token ?? "";
    return { token: () => fixed, reset() {} };
  }
  let cached: { value: string; readAt: number } | undefined;
  return {
    token() {
      const t = now();
      if (!cached || t - cached.readAt >= 50_000) {
        let text: string;
        try {
          text = read(file).trim();
        } catch (err) {
          const code = (err as { code?: string }).code;
          throw new KubeconfigError(`cannot read the token file ${file} (${code ?? String(err)})`);
        }
        if (!text) throw new KubeconfigError(`the token file ${file} is empty`);
        cached = { value: text, readAt: t };
      }
      return cached.value;
    },
    reset(sentAt) {
      if (cached && cached.readAt <= sentAt) cached = undefined;
    },
  };
}
