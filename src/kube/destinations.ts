// Remote destinations: the DestinationPort. A kubeconfig from an App's Secret is
// untrusted input: it is read under the restricted policy (no exec plugins, auth providers,
// local files, proxies, plain http or insecure-skip-tls-verify unless the cluster-wide setting
// allows it), reached through the runtime's transport, and checked with one request before
// the run uses it. Messages name fields and causes, never a credential.
import { parse } from "yaml";
import { DestinationError, MIN_SECRET_LENGTH, Redactor, shortCredential } from "../core/index.ts";
import type { DestinationPort, RemoteCluster } from "../reconcile/ports.ts";
import { createKubePort } from "./adapter.ts";
import { DiscoveryCache } from "./discovery.ts";
import {
  type ClusterAccess,
  KubeconfigError,
  loadKubeconfig,
  RESTRICTED_KUBECONFIG,
} from "./kubeconfig.ts";
import { type RetryOptions, withRetries } from "./retry.ts";
import { type KubeTransport, KubeTransportError } from "./transport.ts";

export interface DestinationOptions {
  /**
   * The runtime's transport for one cluster (Node: node:https; workerd: fetch).
   * @throws DestinationError ("invalid") for what the runtime cannot do with this access
   */
  transport(access: ClusterAccess, source: string): KubeTransport;
  /** Cluster-wide setting: App kubeconfigs may set insecure-skip-tls-verify (off). */
  allowInsecureSkipTLSVerify?: boolean;
  /** Retries and deadlines of the run's requests (the probe has its own, shorter ones). */
  retry?: RetryOptions;
}

/** The probe: a cluster that does not answer fails the run quickly, not after 30 s of retries. */
const PROBE_RETRY: RetryOptions = { maxRetries: 2, attemptTimeoutMs: 10_000, deadlineMs: 15_000 };

/**
 * A DestinationPort. Each connect parses the kubeconfig (its current-context), builds the
 * transport, and sends GET /version (an invalid token is refused there with 401; a proxy or
 * tunnel in front may answer 403): anything but a 2xx, or no answer, is "unreachable".
 * Discovery is cached per API server for the life of the port.
 */
export function createDestinations(options: DestinationOptions): DestinationPort {
  const policy = {
    ...RESTRICTED_KUBECONFIG,
    allowInsecureSkipTLSVerify: options.allowInsecureSkipTLSVerify === true,
  };
  const discovery = new Map<string, DiscoveryCache>();
  return {
    async connect(kubeconfig, source): Promise<RemoteCluster> {
      const secrets = new Redactor(credentialStrings(kubeconfig));
      let access: ClusterAccess;
      try {
        access = loadKubeconfig(kubeconfig, policy, { source });
      } catch (e) {
        if (e instanceof KubeconfigError) {
          throw new DestinationError("invalid", secrets.redact(e.message));
        }
        throw e;
      }
      const short = shortCredential({
        token: access.auth.kind === "token" ? access.auth.token : undefined,
        password: access.auth.kind === "basic" ? access.auth.password : undefined,
      });
      if (short) {
        throw new DestinationError(
          "invalid",
          `kubeconfig ${source}: the ${short} is too short to be redacted from messages; plumb refuses it (use at least ${MIN_SECRET_LENGTH} characters)`,
        );
      }
      const raw = options.transport(access, source);
      await probe(withRetries(raw, { ...options.retry, ...PROBE_RETRY }), access, secrets);
      let cache = discovery.get(access.server);
      if (!cache) {
        cache = new DiscoveryCache();
        discovery.set(access.server, cache);
      }
      const cluster = createKubePort(withRetries(raw, options.retry), { discovery: cache });
      return {
        server: access.server,
        cluster,
        credentials: credentialsOf(access),
        // The probe was one GET.
        requestCounts: () => {
          const counts = cluster.requestCounts();
          return { ...counts, get: counts.get + 1 };
        },
      };
    },
  };
}

async function probe(transport: KubeTransport, access: ClusterAccess, secrets: Redactor) {
  const what = `GET ${access.server}/version`;
  let status: number;
  try {
    status = (await transport("GET", "/version")).status;
  } catch (e) {
    if (!(e instanceof KubeTransportError)) throw e;
    throw new DestinationError("unreachable", secrets.redact(`${what}: ${e.detail}`));
  }
  if (status >= 200 && status < 300) return;
  const why =
    status === 401
      ? "401 Unauthorized: the kubeconfig's credentials are not accepted"
      : status === 403
        ? "403 Forbidden: the server (or a proxy in front of it) refuses this identity"
        : `HTTP ${status}`;
  throw new DestinationError("unreachable", `${what}: ${why}`);
}

/** The secret strings of an access: what the loop redacts from every message. */
function credentialsOf(access: ClusterAccess): string[] {
  const out: string[] = [];
  if (access.auth.kind === "token" && access.auth.token) out.push(access.auth.token);
  if (access.auth.kind === "basic" && access.auth.password) out.push(access.auth.password);
  if (access.tls.key && "data" in access.tls.key) out.push(access.tls.key.data);
  return out;
}

/**
 * Every string under users[].user of a kubeconfig that parses (tokens, passwords, keys, and
 * whatever else a user entry holds), for redacting messages about a kubeconfig that may be
 * refused before its credentials are known. Empty when it does not parse.
 */
function credentialStrings(kubeconfig: string): string[] {
  let doc: unknown;
  try {
    doc = parse(kubeconfig, { version: "1.1", maxAliasCount: 50 });
  } catch {
    return [];
  }
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  const users = (doc as { users?: unknown } | null)?.users;
  if (Array.isArray(users)) for (const u of users) walk((u as { user?: unknown })?.user);
  return out;
}

/**
 * The transport in workerd: a bearer token over the global fetch, to a server whose
 * certificate is publicly trusted (workerd's fetch takes no CA and no client certificate).
 * @throws DestinationError ("invalid") for certificate-authority-data, client certificates,
 *   tls-server-name, basic auth or no token, each saying what works instead
 */
export function fetchDestinationTransport(
  create: (server: string, token: string) => KubeTransport,
): (access: ClusterAccess, source: string) => KubeTransport {
  return (access, source) => {
    const refuse = (what: string) =>
      new DestinationError("invalid", `kubeconfig ${source}: ${what}`);
    if (access.tls.cert) {
      throw refuse(
        "client certificates are not supported in Cloudflare Workers (run plumb on Node for them, or use a bearer token)",
      );
    }
    if (access.tls.ca) {
      throw refuse(
        "certificate-authority-data cannot be used in Cloudflare Workers: fetch trusts only public CAs; reach the API server through a hostname with a publicly trusted certificate (Cloudflare Tunnel, Workers VPC) and remove certificate-authority-data",
      );
    }
    if (access.tls.insecureSkipVerify) {
      throw refuse(
        "insecure-skip-tls-verify cannot be honoured in Cloudflare Workers (fetch always verifies)",
      );
    }
    if (access.tls.serverName) {
      throw refuse("tls-server-name is not supported in Cloudflare Workers");
    }
    if (access.auth.kind !== "token" || !access.auth.token) {
      throw refuse(
        "Cloudflare Workers reach other clusters with a bearer token (users[].user.token)",
      );
    }
    return create(access.server, access.auth.token);
  };
}
