// A local stand-in for the Cloudflare API's DNS records endpoints (v4), enough for plumb's DNS
// adapter: list with filters (name.exact, comment.exact, type, page, per_page), create, update
// (PUT), delete. node:http on 127.0.0.1; records in memory; every request recorded. Answers in
// Cloudflare's envelope ({success, errors, messages, result, result_info}) and refuses what
// Cloudflare refuses: a wrong token, another zone, a name outside the zone, a CNAME beside
// another record at its name, a comment over the plan's limit.
// API: https://developers.cloudflare.com/api/resources/dns/subresources/records/
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeRecord {
  id: string;
  name: string;
  type: string;
  content: string;
  proxied: boolean;
  ttl: number;
  comment: string | null;
}

export interface RecordedRequest {
  method: string;
  /** Path below the API base, e.g. "/zones/<id>/dns_records". */
  path: string;
  query: Record<string, string>;
  /** Parsed JSON body, if any. */
  body?: unknown;
  /** The Authorization header as sent. */
  authorization?: string;
}

export interface CloudflareApi {
  /** API base URL for the client ("http://127.0.0.1:<port>/client/v4"). */
  baseURL: string;
  zoneId: string;
  zone: string;
  token: string;
  records: Map<string, FakeRecord>;
  requests: RecordedRequest[];
  /** Adds a record directly (someone else's, made in the dashboard). */
  seed(record: Omit<FakeRecord, "id" | "ttl" | "proxied"> & { proxied?: boolean }): FakeRecord;
  stop(): Promise<void>;
}

export interface CloudflareApiOptions {
  /** Longest comment accepted (Cloudflare's free plan: 100). */
  commentLimit?: number;
  /** Records per page at most, whatever per_page asks. */
  maxPerPage?: number;
}

const BASE = "/client/v4";

/** Starts the stand-in on 127.0.0.1 with a random port, a random zone id and token. */
export async function startCloudflareApi(
  zone = "example.com",
  options: CloudflareApiOptions = {},
): Promise<CloudflareApi> {
  const zoneId = randomBytes(16).toString("hex");
  const token = `cf-test-${randomBytes(16).toString("hex")}`;
  const records = new Map<string, FakeRecord>();
  const requests: RecordedRequest[] = [];
  const commentLimit = options.commentLimit ?? 100;

  const send = (res: ServerResponse, status: number, body: Record<string, unknown>) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ success: status < 400, errors: [], messages: [], ...body }));
  };
  const fail = (res: ServerResponse, status: number, code: number, message: string) =>
    send(res, status, { success: false, errors: [{ code, message }], result: null });

  const inZone = (name: string) => name === zone || name.endsWith(`.${zone}`);

  /** The reason Cloudflare refuses `r` at its name (besides the record `except`), if any. */
  const clash = (r: { name: string; type: string }, except?: string): string | undefined => {
    const others = [...records.values()].filter((o) => o.name === r.name && o.id !== except);
    if (r.type === "CNAME" && others.length > 0)
      return "An A, AAAA, or CNAME record with that host already exists.";
    if (others.some((o) => o.type === "CNAME"))
      return "A CNAME record with that host already exists.";
    return undefined;
  };

  const validate = (res: ServerResponse, body: unknown, except?: string) => {
    const b = (body ?? {}) as Record<string, unknown>;
    for (const field of ["name", "type", "content"]) {
      if (typeof b[field] !== "string" || b[field] === "") {
        fail(res, 400, 9000 + field.length, `DNS record ${field} is required`);
        return undefined;
      }
    }
    const name = (b["name"] as string).toLowerCase();
    if (!inZone(name)) {
      fail(res, 400, 1004, "DNS Validation Error: the name is not in the zone");
      return undefined;
    }
    const comment = typeof b["comment"] === "string" ? b["comment"] : null;
    if (comment !== null && comment.length > commentLimit) {
      fail(res, 400, 9102, `Comment is too long (at most ${commentLimit} characters)`);
      return undefined;
    }
    const type = b["type"] as string;
    const why = clash({ name, type }, except);
    if (why) {
      fail(res, 400, type === "CNAME" ? 81053 : 81054, why);
      return undefined;
    }
    return {
      name,
      type,
      content: b["content"] as string,
      proxied: b["proxied"] === true,
      ttl: typeof b["ttl"] === "number" ? b["ttl"] : 1,
      comment,
    };
  };

  const list = (res: ServerResponse, q: Record<string, string>) => {
    let found = [...records.values()];
    const name = q["name.exact"] ?? q["name"];
    if (name !== undefined) found = found.filter((r) => r.name === name.toLowerCase());
    if (q["comment.exact"] !== undefined)
      found = found.filter((r) => r.comment === q["comment.exact"]);
    if (q["type"] !== undefined) found = found.filter((r) => r.type === q["type"]);
    found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1));
    const perPage = Math.min(Number(q["per_page"] ?? 100) || 100, options.maxPerPage ?? 5000);
    const page = Math.max(Number(q["page"] ?? 1) || 1, 1);
    const result = found.slice((page - 1) * perPage, page * perPage);
    send(res, 200, {
      result,
      result_info: {
        page,
        per_page: perPage,
        count: result.length,
        total_count: found.length,
        total_pages: Math.max(Math.ceil(found.length / perPage), 1),
      },
    });
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: unknown, url: URL) => {
    if (req.headers.authorization !== `Bearer ${token}`) {
      fail(res, 403, 10000, "Authentication error");
      return;
    }
    const m = /^\/zones\/([^/]+)\/dns_records(?:\/([^/]+))?$/.exec(url.pathname.slice(BASE.length));
    if (!url.pathname.startsWith(BASE) || !m) {
      fail(res, 404, 7000, "No route for that URI");
      return;
    }
    if (m[1] !== zoneId) {
      fail(
        res,
        400,
        7003,
        "Could not route to the zone, perhaps your object identifier is invalid?",
      );
      return;
    }
    const id = m[2];
    const query = Object.fromEntries(url.searchParams);
    if (id === undefined && req.method === "GET") return list(res, query);
    if (id === undefined && req.method === "POST") {
      const v = validate(res, body);
      if (!v) return;
      const record: FakeRecord = { id: randomBytes(16).toString("hex"), ...v };
      records.set(record.id, record);
      return send(res, 200, { result: record });
    }
    const existing = id === undefined ? undefined : records.get(id);
    if (!existing) return fail(res, 404, 81044, "Record does not exist.");
    if (req.method === "PUT") {
      const v = validate(res, body, existing.id);
      if (!v) return;
      const record: FakeRecord = { id: existing.id, ...v };
      records.set(record.id, record);
      return send(res, 200, { result: record });
    }
    if (req.method === "DELETE") {
      records.delete(existing.id);
      return send(res, 200, { result: { id: existing.id } });
    }
    fail(res, 405, 10405, "Method not allowed");
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      try {
        body = text === "" ? undefined : JSON.parse(text);
      } catch {
        return fail(res, 400, 6007, "Malformed JSON in request body");
      }
      const recorded: RecordedRequest = {
        method: req.method ?? "",
        path: url.pathname.slice(BASE.length),
        query: Object.fromEntries(url.searchParams),
      };
      if (body !== undefined) recorded.body = body;
      if (req.headers.authorization) recorded.authorization = req.headers.authorization;
      requests.push(recorded);
      handle(req, res, body, url);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    baseURL: `http://127.0.0.1:${port}${BASE}`,
    zoneId,
    zone,
    token,
    records,
    requests,
    seed(r) {
      const record: FakeRecord = {
        id: randomBytes(16).toString("hex"),
        ttl: 1,
        proxied: false,
        ...r,
        name: r.name.toLowerCase(),
      };
      records.set(record.id, record);
      return record;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
