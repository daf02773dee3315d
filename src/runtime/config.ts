// Runtime configuration shared by the Worker and Node roots, validated at start-up.
import { z } from "zod";
import { parseDuration } from "../app/duration.ts";
import {
  DEFAULT_MAX_RUN_MEMORY,
  DNS_SUBDOMAIN,
  MIN_MAX_RUN_MEMORY,
  parseByteQuantity,
} from "../core/index.ts";
import type { RetryOptions } from "../kube/index.ts";

/** Reconciler settings from env/bindings (the HTTP settings are in src/http/config.ts). */
export interface RuntimeConfig {
  /** Namespaces Apps may deploy to besides their own ("*" = any). */
  allowedDestinations: string[];
  /** Cluster-scoped kinds Apps may apply besides Namespaces ("Kind", "group/Kind" or "*"). */
  allowedClusterKinds: string[];
  /**
   * Apps may prune a Namespace or CRD that holds objects not theirs (PLUMB_ALLOW_CASCADING_PRUNE;
   * default false: such a prune is refused with a Warning Event).
   */
  allowCascadingPrune: boolean;
  /** Runs at once in `reconcile --all` and the cron tick. */
  concurrency: number;
  /** How spec.source.app renders its Ingresses (PLUMB_INGRESS_CLASS, PLUMB_CLUSTER_ISSUER). */
  ingress: { ingressClassName?: string; clusterIssuer?: string };
  /** DNS records for the Apps' domains in one Cloudflare zone; absent when not configured. */
  dns?: DnsConfig;
  /**
   * App kubeconfigs (spec.destination.cluster) may set insecure-skip-tls-verify
   * (PLUMB_ALLOW_INSECURE_DESTINATIONS=true; off: the server's certificate is always checked).
   */
  allowInsecureDestinations: boolean;
  /**
   * Kubernetes API requests: deadline of one attempt and of a request with its retries, ms
   * (PLUMB_KUBE_TIMEOUT, PLUMB_KUBE_DEADLINE; Go durations such as "15s"). Undefined: the
   * transport's defaults (src/kube/retry.ts).
   */
  kubeTimeoutMs?: number;
  kubeDeadlineMs?: number;
  /**
   * Time limit of one Kustomize or Helm render, ms: the build itself, not loading the engine
   * (PLUMB_RENDER_TIMEOUT, a Go duration such as "30s"). Undefined: the engines' default, 10 s.
   */
  renderTimeoutMs?: number;
  /**
   * The memory ceiling of one run, bytes (PLUMB_MAX_RUN_MEMORY, a Kubernetes quantity such as
   * "512Mi" or "1Gi"; default 512 MiB, at least 64 MiB): every size cap of a run is derived from
   * it (runBudget in src/core/budget.ts).
   */
  maxRunMemory: number;
  /**
   * Client-side rate limit of Kubernetes API requests per process (PLUMB_KUBE_QPS, a positive
   * number; PLUMB_KUBE_BURST, a positive integer, default 2 × QPS rounded up as client-go's
   * callers usually set). Undefined: no limit. Shards of one CronJob each take their own.
   */
  kubeRateLimit?: { qps: number; burst: number };
}

/** Cloudflare DNS settings (all of PLUMB_CLOUDFLARE_API_TOKEN, _ZONE_ID, PLUMB_DNS_ZONE, _TARGET). */
export interface DnsConfig {
  /** API token with DNS:Edit on the zone (secret: never logged). */
  apiToken: string;
  /** The zone's id (32 hex characters, the dashboard's "Zone ID"). */
  zoneId: string;
  /** The zone's name ("example.com"): domains outside it get no record. */
  zone: string;
  /** What records point at: an IPv4 (A record), IPv6 (AAAA) or host name (CNAME). */
  target: string;
  /** The record type the target calls for. */
  type: "A" | "AAAA" | "CNAME";
  /** Records proxied through Cloudflare (orange cloud). Default false. */
  proxied: boolean;
}

const HOSTNAME =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)+$/;
const IPV4 = /^(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}$/;
const DNS_VARS = [
  "PLUMB_CLOUDFLARE_API_TOKEN",
  "PLUMB_CLOUDFLARE_ZONE_ID",
  "PLUMB_DNS_ZONE",
  "PLUMB_DNS_TARGET",
] as const;

const OPTIONAL_EMPTY = new Set<string>([
  ...DNS_VARS,
  "PLUMB_DNS_PROXIED",
  "PLUMB_INGRESS_CLASS",
  "PLUMB_CLUSTER_ISSUER",
]);

const duration = z
  .string()
  .refine((v) => {
    try {
      return parseDuration(v) > 0;
    } catch {
      return false;
    }
  }, 'must be a duration such as "15s" or "1m"')
  .optional();

const name = (what: string) =>
  z.string().max(253).regex(DNS_SUBDOMAIN, `must be the name of ${what}`).optional();

const Env = z.object({
  PLUMB_ALLOWED_DESTINATIONS: z.string().optional(),
  PLUMB_ALLOWED_CLUSTER_KINDS: z.string().optional(),
  PLUMB_ALLOW_CASCADING_PRUNE: z
    .enum(["true", "false"], { error: "must be true or false" })
    .optional(),
  PLUMB_CONCURRENCY: z
    .string()
    .regex(/^[1-9][0-9]*$/, "must be a positive integer")
    .optional(),
  PLUMB_INGRESS_CLASS: name("an IngressClass"),
  PLUMB_CLUSTER_ISSUER: name("a cert-manager ClusterIssuer"),
  PLUMB_CLOUDFLARE_API_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{20,200}$/, "must be a Cloudflare API token (20 to 200 visible characters)")
    .optional(),
  PLUMB_CLOUDFLARE_ZONE_ID: z
    .string()
    .regex(/^[0-9a-f]{32}$/, "must be a zone id (32 lower-case hex characters)")
    .optional(),
  PLUMB_DNS_ZONE: z.string().regex(HOSTNAME, "must be a zone name such as example.com").optional(),
  PLUMB_DNS_TARGET: z
    .string()
    .refine(
      (t) => IPV4.test(t) || isIpv6(t) || HOSTNAME.test(t),
      "must be an IPv4 or IPv6 address or a host name",
    )
    .optional(),
  PLUMB_DNS_PROXIED: z.enum(["true", "false"], "must be true or false").optional(),
  PLUMB_ALLOW_INSECURE_DESTINATIONS: z
    .enum(["true", "false"], { error: 'must be "true" or "false"' })
    .optional(),
  PLUMB_KUBE_TIMEOUT: duration,
  PLUMB_KUBE_DEADLINE: duration,
  PLUMB_RENDER_TIMEOUT: duration,
  PLUMB_MAX_RUN_MEMORY: z
    .string()
    .refine(
      (v) => (parseByteQuantity(v) ?? 0) >= MIN_MAX_RUN_MEMORY,
      'must be a byte quantity of at least 64Mi, such as "512Mi" or "1Gi"',
    )
    .optional(),
  PLUMB_KUBE_QPS: z
    .string()
    .regex(/^\d+(\.\d+)?$/, "must be a positive number of requests a second")
    .refine((v) => Number(v) > 0, "must be a positive number of requests a second")
    .optional(),
  PLUMB_KUBE_BURST: z
    .string()
    .regex(/^[1-9]\d*$/, "must be a positive integer")
    .optional(),
});

function isIpv6(text: string): boolean {
  if (!text.includes(":")) return false;
  try {
    return new URL(`http://[${text}]/`).hostname !== "";
  } catch {
    return false;
  }
}

/** The DNS record type for a target: A for IPv4, AAAA for IPv6, CNAME for a host name. */
function recordTypeFor(target: string): "A" | "AAAA" | "CNAME" {
  return IPV4.test(target) ? "A" : isIpv6(target) ? "AAAA" : "CNAME";
}

/**
 * Parses runtime settings. @throws Error naming the bad variable, e.g.
 * "PLUMB_CONCURRENCY: must be a positive integer" (never echoing a value).
 */
export function parseRuntimeConfig(env: Record<string, unknown>): RuntimeConfig {
  // An empty ingress or DNS variable is an unset one (a blank line in a .env file).
  const r = Env.safeParse(
    Object.fromEntries(
      Object.entries(env).filter(([k, v]) => !(v === "" && OPTIONAL_EMPTY.has(k))),
    ),
  );
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new Error(`${issue.path.join(".")}: ${issue.message}`);
  }
  const list = (v: string | undefined) =>
    (v ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  const d = r.data;
  const ingress: RuntimeConfig["ingress"] = {};
  if (d.PLUMB_INGRESS_CLASS) ingress.ingressClassName = d.PLUMB_INGRESS_CLASS;
  if (d.PLUMB_CLUSTER_ISSUER) ingress.clusterIssuer = d.PLUMB_CLUSTER_ISSUER;
  const config: RuntimeConfig = {
    allowedDestinations: list(d.PLUMB_ALLOWED_DESTINATIONS),
    allowedClusterKinds: list(d.PLUMB_ALLOWED_CLUSTER_KINDS),
    allowCascadingPrune: d.PLUMB_ALLOW_CASCADING_PRUNE === "true",
    concurrency: Number(d.PLUMB_CONCURRENCY ?? "4"),
    ingress,
    allowInsecureDestinations: d.PLUMB_ALLOW_INSECURE_DESTINATIONS === "true",
    maxRunMemory: d.PLUMB_MAX_RUN_MEMORY
      ? (parseByteQuantity(d.PLUMB_MAX_RUN_MEMORY) as number)
      : DEFAULT_MAX_RUN_MEMORY,
  };
  if (d.PLUMB_KUBE_TIMEOUT) config.kubeTimeoutMs = parseDuration(d.PLUMB_KUBE_TIMEOUT);
  if (d.PLUMB_KUBE_DEADLINE) config.kubeDeadlineMs = parseDuration(d.PLUMB_KUBE_DEADLINE);
  if (d.PLUMB_RENDER_TIMEOUT) config.renderTimeoutMs = parseDuration(d.PLUMB_RENDER_TIMEOUT);
  if (d.PLUMB_KUBE_BURST && !d.PLUMB_KUBE_QPS) {
    throw new Error("PLUMB_KUBE_BURST: required with PLUMB_KUBE_QPS (the rate limit)");
  }
  if (d.PLUMB_KUBE_QPS) {
    const qps = Number(d.PLUMB_KUBE_QPS);
    config.kubeRateLimit = {
      qps,
      burst: d.PLUMB_KUBE_BURST ? Number(d.PLUMB_KUBE_BURST) : Math.max(1, Math.ceil(2 * qps)),
    };
  }
  const set = DNS_VARS.filter((v) => d[v] !== undefined);
  if (set.length > 0 && set.length < DNS_VARS.length) {
    const missing = DNS_VARS.filter((v) => !set.includes(v));
    throw new Error(`${missing.join(", ")}: required with ${set.join(", ")} (DNS records)`);
  }
  if (set.length === DNS_VARS.length) {
    config.dns = {
      apiToken: d.PLUMB_CLOUDFLARE_API_TOKEN!,
      zoneId: d.PLUMB_CLOUDFLARE_ZONE_ID!,
      zone: d.PLUMB_DNS_ZONE!,
      target: d.PLUMB_DNS_TARGET!,
      type: recordTypeFor(d.PLUMB_DNS_TARGET!),
      proxied: d.PLUMB_DNS_PROXIED === "true",
    };
  }
  return config;
}

/**
 * The Kubernetes transport's retry options from the settings: the deadlines, and `log` told of
 * each retry ({msg: "retrying kubernetes request", request, attempt, cause, waitMs}).
 */
export function kubeRetryOptions(
  config: RuntimeConfig,
  log: (entry: Record<string, unknown>) => void,
): RetryOptions {
  return {
    ...(config.kubeTimeoutMs ? { attemptTimeoutMs: config.kubeTimeoutMs } : {}),
    ...(config.kubeDeadlineMs ? { deadlineMs: config.kubeDeadlineMs } : {}),
    onRetry: (e) => log({ msg: "retrying kubernetes request", ...e }),
  };
}
