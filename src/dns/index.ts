// DNS records for the Apps' domains: the Cloudflare adapter and its settings for the loop.
import type { DnsSettings } from "../reconcile/ports.ts";
import { createCloudflareDns } from "./cloudflare.ts";

export { type CloudflareDnsOptions, createCloudflareDns } from "./cloudflare.ts";

/**
 * The loop's DNS settings (Ports.dns) from the cluster settings (RuntimeConfig.dns), or
 * undefined when DNS is not configured. `baseURL` points the client elsewhere (tests).
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
    records: createCloudflareDns({
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
