// DNS records for the Apps' domains: the Cloudflare adapter and its settings for the loop.
import type { DnsPort, DnsSettings } from "../reconcile/ports.ts";
import type { CloudflareDnsOptions } from "./cloudflare.ts";

export type { CloudflareDnsOptions } from "./cloudflare.ts";

/**
 * The loop's DNS settings (Ports.dns) from the cluster settings (RuntimeConfig.dns), or
 * undefined when DNS is not configured. `baseURL` points the client elsewhere (tests). The
 * Cloudflare client is loaded on the first call that needs it, so a run that touches no DNS
 * record never loads it (the fixed cost of a run).
 */
export function cloudflareDnsSettings(
  config:
    | {
        apiToken: string;
        zoneId: string;
        zone: string;
        target: string;
        type: DnsSettings["type"];
        proxied: boolean;
      }
    | undefined,
  baseURL?: string,
): DnsSettings | undefined {
  if (!config) return undefined;
  return {
    records: lazyCloudflareDns({
      apiToken: config.apiToken,
      zoneId: config.zoneId,
      ...(baseURL ? { baseURL } : {}),
    }),
    zone: config.zone,
    target: config.target,
    type: config.type,
    proxied: config.proxied,
  };
}

/** A DnsPort that imports the Cloudflare adapter (and its SDK) on its first call. */
function lazyCloudflareDns(options: CloudflareDnsOptions): DnsPort {
  let port: Promise<DnsPort> | undefined;
  const load = () => {
    port ??= import("./cloudflare.ts").then((m) => m.createCloudflareDns(options));
    return port;
  };
  return {
    listByName: async (name) => (await load()).listByName(name),
    listByComment: async (comment) => (await load()).listByComment(comment),
    create: async (record) => (await load()).create(record),
    update: async (id, record) => (await load()).update(id, record),
    delete: async (id) => (await load()).delete(id),
  };
}
