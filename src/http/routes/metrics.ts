// GET /metrics: the Apps' statuses as Prometheus gauges, under bearer-token auth.
import type { Hono } from "hono";
import { bearerAuth } from "../auth.ts";
import { appsVisibleTo } from "../listing.ts";
import { METRICS_CONTENT_TYPE, renderMetrics } from "../metrics.ts";
import type { HttpDeps, HttpEnv } from "../types.ts";

/**
 * Registers `GET /metrics`: `Authorization: Bearer <token>` from PLUMB_API_TOKENS (401 JSON
 * otherwise; Prometheus sends it with `authorization: {credentials_file: ...}`). A token
 * limited to namespaces sees the metrics of those namespaces only. Computed from the Apps
 * listed at each scrape ({@link renderMetrics}); nothing is kept between scrapes.
 */
export function registerMetricsRoute(app: Hono<HttpEnv>, deps: HttpDeps): void {
  const authenticate = bearerAuth(deps.config.apiTokens);
  app.get("/metrics", async (c) => {
    const caller = await authenticate(c.req.header("Authorization"));
    const body = renderMetrics(await appsVisibleTo(deps.apps, caller));
    return c.body(body, 200, {
      "content-type": METRICS_CONTENT_TYPE,
      "cache-control": "no-store",
    });
  });
}
