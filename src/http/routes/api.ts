// /api/v1: App status and operations, under bearer-token auth.
import type { Context, Hono, MiddlewareHandler } from "hono";
import { z } from "zod";
import type { App, Operation } from "../../app/index.ts";
import { toIssues } from "../../app/index.ts";
import { isDnsLabel, isDnsSubdomain } from "../../core/index.ts";
import { summarize } from "../appview.ts";
import { bearerAuth, requireNamespace } from "../auth.ts";
import { HttpError } from "../errors.ts";
import { appsVisibleTo } from "../listing.ts";
import { buildOperation, type OperationRequest, submitOperation } from "../operations.ts";
import type { HttpDeps, HttpEnv } from "../types.ts";

const ApproveBody = z.strictObject({ revision: z.string().min(1).max(256).optional() });

const OPERATION_NAMES = {
  sync: "Sync",
  rollback: "Rollback",
  restart: "Restart",
  deploy: "Deploy",
} as const;

const OperationBody = z
  .strictObject({
    type: z
      .string()
      .transform((s) => s.toLowerCase())
      .pipe(z.enum(["sync", "rollback", "restart", "deploy"])),
    revision: z.string().min(1).max(256).optional(),
  })
  .refine((b) => b.revision === undefined || b.type === "rollback", {
    message: "revision is only accepted for rollback",
    path: ["revision"],
  });

/** The JSON body, or undefined when empty and `optional`. 400 for malformed JSON or a missing body. */
async function readJson(c: Context, optional: boolean): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") {
    if (optional) return undefined;
    throw new HttpError(400, "request body required");
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, "malformed JSON body");
  }
}

function validate<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (!r.success)
    throw new HttpError(400, "invalid request body", {
      issues: toIssues(r.error, "body", "InvalidRequest"),
    });
  return r.data;
}

/**
 * The App at :ns/:name after the caller's namespace check: 400 for a name no App can have (a
 * DNS-1123 label and subdomain), 403 outside the token's namespaces, 404 when absent.
 */
async function appFor(c: Context<HttpEnv>, deps: HttpDeps): Promise<App> {
  const ns = c.req.param("ns") ?? "";
  const name = c.req.param("name") ?? "";
  if (!isDnsLabel(ns) || !isDnsSubdomain(name)) {
    throw new HttpError(400, `not an App name: ${JSON.stringify(`${ns}/${name}`).slice(0, 300)}`);
  }
  requireNamespace(c.get("caller"), ns);
  const app = await deps.apps.getApp(ns, name);
  if (!app) throw new HttpError(404, `App ${ns}/${name} not found`);
  return app;
}

/** Checks, writes and announces an operation requested over the API (see buildOperation). */
async function requestOperation(
  c: Context<HttpEnv>,
  deps: HttpDeps,
  target: App,
  request: OperationRequest,
): Promise<Operation> {
  const op = buildOperation(target, request, c.get("caller").name, deps.now());
  await submitOperation(deps, target, op, "api");
  return op;
}

/**
 * Registers the API. Every route needs `Authorization: Bearer <token>` (401 otherwise) and,
 * for /namespaces/:ns/..., a token allowed in :ns (403 otherwise), both checked before the
 * cluster is read or written.
 * - GET /api/v1/apps → 200 {"items": [AppSummary]} (the caller's namespaces only)
 * - GET /api/v1/namespaces/:ns/apps/:name → 200 AppSummary | 404
 * - POST /api/v1/namespaces/:ns/apps/:name/approve [{"revision"}] → 202 {"operation"} |
 *   404 | 409 (frozen, nothing held, stale revision, operation pending)
 * - POST /api/v1/namespaces/:ns/apps/:name/reject [{"revision"}]: the same for a Reject (the
 *   held revision is turned down and not held again)
 * - POST /api/v1/namespaces/:ns/apps/:name/operations {"type": sync|rollback|restart|deploy,
 *   "revision"?} → 202 {"operation"} | 400 | 404 | 409 (frozen, pending, unknown revision)
 */
export function registerApiRoutes(
  app: Hono<HttpEnv>,
  deps: HttpDeps,
  limit: MiddlewareHandler,
): void {
  const authenticate = bearerAuth(deps.config.apiTokens);
  app.use("/api/*", async (c, next) => {
    c.set("caller", await authenticate(c.req.header("Authorization")));
    await next();
  });

  app.get("/api/v1/apps", async (c) => {
    const now = deps.now();
    const items = (await appsVisibleTo(deps.apps, c.get("caller"))).map((a) => summarize(a, now));
    return c.json({ items }, 200);
  });

  app.get("/api/v1/namespaces/:ns/apps/:name", async (c) =>
    c.json(summarize(await appFor(c, deps), deps.now()), 200),
  );

  for (const verb of ["approve", "reject"] as const) {
    app.post(`/api/v1/namespaces/:ns/apps/:name/${verb}`, limit, async (c) => {
      requireNamespace(c.get("caller"), c.req.param("ns"));
      const body = validate(ApproveBody.optional(), await readJson(c, true));
      const target = await appFor(c, deps);
      const type = verb === "approve" ? "Approve" : "Reject";
      const operation = await requestOperation(c, deps, target, { type, revision: body?.revision });
      return c.json({ operation }, 202);
    });
  }

  app.post("/api/v1/namespaces/:ns/apps/:name/operations", limit, async (c) => {
    requireNamespace(c.get("caller"), c.req.param("ns"));
    const body = validate(OperationBody, await readJson(c, false));
    const target = await appFor(c, deps);
    const type = OPERATION_NAMES[body.type];
    const operation = await requestOperation(c, deps, target, { type, revision: body.revision });
    return c.json({ operation }, 202);
  });
}
