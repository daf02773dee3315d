// The security headers of every answer plumb's HTTP app gives, in one place: the middleware
// sets them on every response (routes, errors, 404s, 405s, redirects), and answers made outside
// the app (readiness.ts) take them from here too.
import type { MiddlewareHandler } from "hono";

/**
 * Headers every answer carries: no framing (frame-ancestors, X-Frame-Options), no inline or
 * foreign content (the page's CSP: its own stylesheet only, forms posting to itself), no
 * content-type sniffing, no Referer, no cross-origin embedding or window sharing. OWASP's
 * HTTP headers cheat sheet
 * (https://cheatsheetseries.owasp.org/cheatsheets/HTTP_Headers_Cheat_Sheet.html).
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-resource-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
};

/** Caching of an answer whose route says nothing: none (status, tokens' views, errors). */
const DEFAULT_CACHE = "no-store";

/** `res` with {@link SECURITY_HEADERS} set (and `cache-control: no-store` unless it has one). */
export function secured(res: Response): Response {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.headers.set(name, value);
  if (!res.headers.has("cache-control")) res.headers.set("cache-control", DEFAULT_CACHE);
  return res;
}

/** Middleware that makes every response of the app {@link secured}: register it first. */
export const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  secured(c.res);
};

/** Longest request path an answer quotes; longer ones are cut with "…". */
const SHOWN_PATH = 200;

/**
 * The request's path as an answer may quote it: as the URL spells it (percent-encoded, never
 * decoded: `<`, `>`, `"`, spaces and control characters stay escaped), at most 200 characters.
 */
export function shownPath(url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    path = "/";
  }
  path = path.replace(/[^A-Za-z0-9\-._~!$&()*+,;=:@/%]/gu, (ch) =>
    [...new TextEncoder().encode(ch)]
      .map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`)
      .join(""),
  );
  return path.length > SHOWN_PATH ? `${path.slice(0, SHOWN_PATH - 1)}…` : path;
}
