// 405 Method Not Allowed with Allow for a known route asked with another method (RFC 9110
// §15.5.6), instead of a 404 that says the route does not exist.
import type { Hono } from "hono";
import { shownPath } from "./headers.ts";
import type { HttpEnv } from "./types.ts";

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;

/**
 * For every path registered on `app` so far, answers the methods it does not serve with 405,
 * `Allow: <its methods>` (HEAD with GET) and `{"message": "<METHOD> is not allowed on <path>;
 * use <methods>"}`. Call after every route is registered. Middleware (method ALL) and
 * wildcard paths are left alone.
 */
export function answerOtherMethods(app: Hono<HttpEnv>): void {
  const byPath = new Map<string, Set<string>>();
  for (const route of app.routes) {
    if (route.method === "ALL" || route.path.includes("*")) continue;
    const methods = byPath.get(route.path) ?? new Set<string>();
    methods.add(route.method);
    if (route.method === "GET") methods.add("HEAD");
    byPath.set(route.path, methods);
  }
  for (const [path, served] of byPath) {
    const allow = METHODS.filter((m) => served.has(m)).join(", ");
    const others = METHODS.filter((m) => !served.has(m));
    if (others.length === 0) continue;
    app.on([...others], path, (c) =>
      c.json(
        { message: `${c.req.method} is not allowed on ${shownPath(c.req.url)}; use ${allow}` },
        405,
        { Allow: allow },
      ),
    );
  }
}
