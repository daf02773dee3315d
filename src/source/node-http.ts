// An isomorphic-git HttpClient on node:http(s), for Node runs: the global fetch loads undici,
// which costs a short run ~20 ms of CPU and 16 MiB; workerd keeps the fetch client.
import type { IncomingMessage } from "node:http";
import type { GitHttpRequest, GitHttpResponse, HttpClient } from "isomorphic-git";

// The CommonJS objects: an ESM import of node:http builds its namespace from every export, and
// one of them loads undici.
const http = process.getBuiltinModule("node:http");
const https = process.getBuiltinModule("node:https");

const MAX_REDIRECTS = 5;

/**
 * An HttpClient as isomorphic-git's web client behaves, on node:http(s): honours the request's
 * AbortSignal (the GitPort's deadline), streams the response body, follows up to 5 redirects
 * (301/302/303 as GET, 307/308 with the same method and body) and, like fetch, drops the
 * Authorization header when a redirect leaves the origin. Connections are kept alive.
 * @throws the socket's error (ECONNREFUSED, …) or an AbortError when the signal fires
 */
export function createNodeHttpClient(): HttpClient {
  const agents = {
    "http:": new http.Agent({ keepAlive: true }),
    "https:": new https.Agent({ keepAlive: true }),
  };
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const body = req.body ? await collect(req.body) : undefined;
      let url = new URL(req.url);
      let method = req.method ?? "GET";
      let headers: Record<string, string> = { ...(req.headers ?? {}) };
      let payload = body;
      for (let hop = 0; ; hop++) {
        const res = await send(url, method, headers, payload, req.signal, agents);
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (![301, 302, 303, 307, 308].includes(status) || !location || hop >= MAX_REDIRECTS) {
          return {
            url: url.href,
            method,
            statusCode: status,
            statusMessage: res.statusMessage ?? "",
            headers: flatHeaders(res),
            body: res[Symbol.asyncIterator]() as AsyncIterableIterator<Uint8Array>,
          };
        }
        res.resume();
        const next = new URL(location, url);
        if (next.protocol !== "http:" && next.protocol !== "https:") {
          throw new Error(`redirect to a non-http(s) URL: ${next.protocol}`);
        }
        if (next.origin !== url.origin) {
          headers = Object.fromEntries(
            Object.entries(headers).filter(([k]) => k.toLowerCase() !== "authorization"),
          );
        }
        if (status !== 307 && status !== 308 && method !== "GET" && method !== "HEAD") {
          method = "GET";
          payload = undefined;
          headers = Object.fromEntries(
            Object.entries(headers).filter(([k]) => !/^content-(type|length)$/i.test(k)),
          );
        }
        url = next;
      }
    },
  };
}

function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Uint8Array | undefined,
  signal: AbortSignal | undefined,
  agents: Record<"http:" | "https:", import("node:http").Agent>,
): Promise<IncomingMessage> {
  const plain = url.protocol === "http:";
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const out = { ...headers };
    if (body) out["Content-Length"] = String(body.byteLength);
    // The signal cuts this exchange: before the answer, the request (an AbortError, to the
    // caller); after it, the body, without an error — passed to request() it was left on the
    // kept-alive socket, and the abort the GitPort makes at the end of every call destroyed
    // that socket with an 'error' nobody listened to, ending the process (a hostile server's
    // ERR line). A body cut this way ends early for its reader.
    let response: IncomingMessage | undefined;
    const onAbort = () => {
      if (response) response.destroy();
      else req.destroy(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
    };
    const done = () => signal?.removeEventListener("abort", onAbort);
    const req = (plain ? http : https).request(
      url,
      { method, headers: out, agent: plain ? agents["http:"] : agents["https:"] },
      (res) => {
        response = res;
        res.on("close", done);
        resolve(res);
      },
    );
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", (err) => {
      done();
      reject(err);
    });
    req.end(body);
  });
}

function flatHeaders(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) {
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  }
  return out;
}

async function collect(
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of body) parts.push(chunk);
  return Buffer.concat(parts);
}
