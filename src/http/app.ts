// The HTTP app: health, webhooks and the API, with one error handler. Runs on Node and workerd.
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { errorResponse, HttpError } from "./errors.ts";
import { securityHeaders, shownPath } from "./headers.ts";
import { answerOtherMethods } from "./methods.ts";
import { configWarnings } from "./readiness.ts";
import { registerApiRoutes } from "./routes/api.ts";
import { registerMetricsRoute } from "./routes/metrics.ts";
import { registerSlackRoutes } from "./routes/slack.ts";
import { registerWebRoutes } from "./routes/web.ts";
import { registerWebhookRoutes } from "./routes/webhooks.ts";
import type { HttpDeps, HttpEnv } from "./types.ts";

/** Largest request body accepted on any POST route: 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Builds the Hono app.
 * - GET /healthz → 200 {"status":"ok"}, with `warnings` when no API token or no webhook secret
 *   is configured ({@link configWarnings}; no auth)
 * - POST /webhooks/github|gitlab|gitea (see registerWebhookRoutes)
 * - /api/v1/... under bearer-token auth (see registerApiRoutes)
 * - GET /metrics, Prometheus text under bearer-token auth (see registerMetricsRoute)
 * - POST /slack/interactions, Slack-signed button presses (see registerSlackRoutes)
 * - the web page at / (see registerWebRoutes), HTML, under a signed session cookie
 * Bodies over {@link MAX_BODY_BYTES} → 413; unknown routes → 404 (quoting the path as the URL
 * spells it, never decoded: {@link shownPath}); a known route asked with another method → 405
 * with Allow ({@link answerOtherMethods}); every error is JSON `{"message": ...}` from the
 * single `onError` handler ({@link errorResponse}). Every answer carries the same security
 * headers ({@link securityHeaders}).
 * Nothing here logs request headers, bodies, secrets or tokens.
 */
export function createHttpApp(deps: HttpDeps): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  // First, so it wraps every answer: routes, errors, 404s, 405s and redirects alike.
  app.use("*", securityHeaders);
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new HttpError(413, `request body exceeds ${MAX_BODY_BYTES} bytes (1 MiB)`);
    },
  });

  // Up; `warnings` names settings that leave part of the API unusable.
  const warnings = configWarnings(deps.config);
  app.get("/healthz", (c) =>
    c.json(warnings.length > 0 ? { status: "ok", warnings } : { status: "ok" }, 200),
  );
  registerWebhookRoutes(app, deps, limit);
  registerApiRoutes(app, deps, limit);
  registerMetricsRoute(app, deps);
  registerSlackRoutes(app, deps, limit);
  registerWebRoutes(app, deps, limit);
  answerOtherMethods(app);

  app.notFound((c) =>
    c.json({ message: `no route for ${c.req.method} ${shownPath(c.req.url)}` }, 404),
  );
  app.onError((err, c) => errorResponse(err, c, deps.log, deps.redactor));
  return app;
}
