// DnsPort over the Cloudflare API with the official `cloudflare` client, built with only its DNS
// records resource (the tree-shakable client keeps the Worker bundle small). fetch only, so it
// runs in Node and in workerd alike. API: https://developers.cloudflare.com/api/resources/dns/
import { BaseRecords } from "cloudflare/resources/dns/records";
import { createClient } from "cloudflare/tree-shakable";
import type { DnsRecord, DnsRecordInput } from "../core/index.ts";
import type { DnsPort } from "../reconcile/ports.ts";

export interface CloudflareDnsOptions {
  /** API token with Zone → DNS → Edit on the zone (secret). */
  apiToken: string;
  zoneId: string;
  /** API base (default https://api.cloudflare.com/client/v4; tests point it at a local server). */
  baseURL?: string;
  fetch?: typeof fetch;
  /** Per request, ms (default 15 000). */
  timeoutMs?: number;
  /** Retries of 408, 409, 429, 5xx and connection errors (the client's backoff; default 2). */
  maxRetries?: number;
}

/** Records per list page (Cloudflare's per_page; it allows up to 5,000,000). */
const PER_PAGE = 100;
/** Pages read at most per list: past this the list is refused rather than read in part. */
const MAX_PAGES = 50;

/**
 * A DnsPort for one Cloudflare zone. Lists use `name.exact` and `comment.exact` filters and read
 * every page (result_info.total_pages; at most 50 pages of 100); writes are POST (create), PUT (overwrite) and DELETE,
 * with ttl 1 ("automatic"). Credentials come only from `options` (never the CLOUDFLARE_*
 * environment variables the client would otherwise read), and the client logs nothing.
 * Errors are Error("cloudflare: <what>: <status> <Cloudflare's errors>"), never holding the token.
 */
export function createCloudflareDns(options: CloudflareDnsOptions): DnsPort {
  const client = createClient({
    resources: [BaseRecords],
    apiToken: options.apiToken,
    apiKey: null,
    apiEmail: null,
    userServiceKey: null,
    baseURL: options.baseURL ?? "https://api.cloudflare.com/client/v4",
    timeout: options.timeoutMs ?? 15_000,
    maxRetries: options.maxRetries ?? 2,
    logLevel: "off",
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const zone_id = options.zoneId;
  const records = client.dns.records;

  const wrap = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      throw new Error(`cloudflare: ${what}: ${text.split(options.apiToken).join("[token]")}`);
    }
  };

  const list = (what: string, filter: { name?: { exact: string }; comment?: { exact: string } }) =>
    wrap(what, async () => {
      const out: DnsRecord[] = [];
      let page = await records.list({ zone_id, ...filter, per_page: PER_PAGE, match: "all" });
      for (let n = 1; ; n++) {
        for (const r of page.result) out.push(toRecord(r));
        // Cloudflare sends result_info.total_pages (the client's type leaves it out).
        const total = (page.result_info as { total_pages?: number }).total_pages;
        const more = total !== undefined ? n < total : page.result.length >= PER_PAGE;
        if (!more || page.result.length === 0) break;
        if (n >= MAX_PAGES) throw new Error(`more than ${MAX_PAGES} pages of records`);
        page = await page.getNextPage();
      }
      return out;
    });

  return {
    listByName: (name) => list(`list records named ${name}`, { name: { exact: name } }),
    listByComment: (comment) =>
      list(`list records commented "${comment}"`, { comment: { exact: comment } }),
    create: (record) =>
      wrap(`create ${record.type} ${record.name}`, async () =>
        toRecord(await records.create({ zone_id, ...body(record) } as never)),
      ),
    update: (id, record) =>
      wrap(`update ${record.type} ${record.name}`, async () =>
        toRecord(await records.update(id, { zone_id, ...body(record) } as never)),
      ),
    delete: (id) =>
      wrap(`delete record ${id}`, async () => {
        await records.delete(id, { zone_id });
      }),
  };
}

function body(record: DnsRecordInput): Record<string, unknown> {
  const out: Record<string, unknown> = {
    type: record.type,
    name: record.name,
    content: record.content,
    ttl: 1,
    proxied: record.proxied ?? false,
  };
  if (record.comment !== undefined) out["comment"] = record.comment;
  return out;
}

function toRecord(r: {
  id?: string;
  name?: string;
  type?: string;
  content?: string;
  proxied?: boolean;
  comment?: string | null;
}): DnsRecord {
  const out: DnsRecord = {
    id: r.id ?? "",
    name: (r.name ?? "").toLowerCase(),
    type: r.type ?? "",
    content: r.content ?? "",
    proxied: r.proxied ?? false,
  };
  if (typeof r.comment === "string" && r.comment !== "") out.comment = r.comment;
  return out;
}
