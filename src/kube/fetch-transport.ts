// The transport on a standard fetch (Cloudflare workerd, where node:https is not available):
// a bearer token, and the server's certificate must be publicly trusted (workerd's fetch takes
// no CA), e.g. a Workers VPC binding or a tunnel hostname.
import { describeCause } from "./causes.ts";
import { type KubeTransport, KubeTransportError, parseBody, withQuery } from "./transport.ts";
import { workerdCause } from "./workerd-causes.ts";

/**
 * A KubeTransport for `server` (https://host[:port][/prefix]) with a bearer `token`.
 * A fetch that rejects counts as possibly sent (fetch does not say whether the request left),
 * except for failures that can only happen while connecting.
 */
export function createFetchTransport(
  server: string,
  token: string,
  fetchImpl: typeof fetch = fetch,
): KubeTransport {
  const base = server.replace(/\/+$/, "");
  return async (method, path, request = {}) => {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${token}`,
      Accept: request.accept ?? "application/json",
    };
    let body: string | null = null;
    if (request.body !== undefined) {
      headers["Content-Type"] = request.contentType ?? "application/json";
      body = JSON.stringify(request.body);
    }
    const controller = new AbortController();
    request.signal?.addEventListener("abort", () => controller.abort(), { once: true });
    let timedOut = false;
    const timer =
      request.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            controller.abort();
          }, request.timeoutMs);
    try {
      const res = await fetchImpl(`${base}${withQuery(path, request.query)}`, {
        method,
        headers,
        body,
        signal: controller.signal,
      });
      const text = await res.text();
      const out: Record<string, string> = {};
      res.headers.forEach((value, name) => {
        out[name.toLowerCase()] = value;
      });
      return { status: res.status, body: parseBody(text), headers: out };
    } catch (err) {
      if (request.signal?.aborted) throw request.signal.reason;
      if (timedOut) {
        const text = `no answer within ${request.timeoutMs} ms (timeout)`;
        throw new KubeTransportError(method, path, "timeout", text, { sent: true });
      }
      // workerd hides a TLS failure behind "internal error": say what it almost always is.
      const hidden = workerdCause(err, base);
      if (hidden) {
        throw new KubeTransportError(method, path, hidden.kind, hidden.text, {
          sent: hidden.kind !== "tls",
        });
      }
      const cause = describeCause(err, true);
      throw new KubeTransportError(method, path, cause.kind, cause.text, {
        code: cause.code,
        sent: cause.sent,
      });
    } finally {
      clearTimeout(timer);
    }
  };
}
