// The web page at /: Apps, one App, approvals and operations, behind a sign-in with an API
// token. Server-rendered HTML that works without JavaScript; every form carries a CSRF token.
import type { Context, Hono, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { JSXNode } from "hono/jsx";
import type { App, Operation } from "../../app/index.ts";
import { isDnsLabel, isDnsSubdomain } from "../../core/index.ts";
import { keyOf, requestedOperation } from "../appview.ts";
import { requireNamespace, tokenLookup } from "../auth.ts";
import { DEFAULT_NAMESPACE } from "../config.ts";
import { HttpError } from "../errors.ts";
import { appsVisibleTo } from "../listing.ts";
import { buildOperation, submitOperation } from "../operations.ts";
import {
  csrfMatches,
  LOGIN_SECONDS,
  randomId,
  SESSION_SECONDS,
  type Session,
  SessionKeys,
} from "../session.ts";
import type { HttpDeps, HttpEnv } from "../types.ts";
import { STYLESHEET } from "../web/style.ts";
import {
  appPage,
  approvePage,
  appsPage,
  errorPage,
  loginPage,
  matchesStatus,
  renderDocument,
  STATUS_FILTERS,
  type StatusFilter,
} from "../web/views.ts";

const SESSION_COOKIE = "plumb_session";
const LOGIN_COOKIE = "plumb_login";
/** Recent Events shown on an App's page. */
const EVENTS_SHOWN = 20;
const FORM_OPERATIONS: Record<string, Operation["type"]> = {
  approve: "Approve",
  reject: "Reject",
  sync: "Sync",
  restart: "Restart",
  rollback: "Rollback",
};

/**
 * Cookie attributes: `__Host-` prefix (Secure, Path=/, no Domain), HttpOnly, SameSite=Strict
 * (https://developer.mozilla.org/en-US/docs/Web/HTTP/Cookies#cookie_prefixes).
 */
const COOKIE = {
  prefix: "host",
  path: "/",
  secure: true,
  httpOnly: true,
  sameSite: "Strict",
} as const;

/**
 * Registers the web page (when PLUMB_SESSION_KEY is set; otherwise these routes answer 404):
 * - GET /login, POST /login {token, _csrf}: a valid API token sets the session cookie
 *   (signed, expiring after SESSION_SECONDS, HttpOnly, Secure, SameSite=Strict) → 303 /
 * - POST /logout {_csrf} → the sign-out recorded in the cluster (a Lease in PLUMB_NAMESPACE
 *   until the session would have expired: every plumb process refuses the cookie from then
 *   on), cookie cleared, 303 /login; when the record cannot be written, 502 saying so
 * - GET / [?namespace=&status=]: the Apps the token may see
 * - GET /apps/:ns/:name, GET /apps/:ns/:name/approve (the held preview, Approve / Reject)
 * - POST /apps/:ns/:name/operations {_csrf, type: approve|reject|sync|restart|rollback,
 *   revision?}: the API's rules (buildOperation), then 303 back to the App
 * A GET without a session (or with a signed-out one) goes to /login; a POST without one is
 * 401, with a missing or wrong CSRF token 403, both before anything but the sign-out record is
 * read. Errors are HTML pages.
 */
export function registerWebRoutes(
  app: Hono<HttpEnv>,
  deps: HttpDeps,
  limit: MiddlewareHandler,
): void {
  app.get("/assets/plumb.css", (c) =>
    c.body(STYLESHEET, 200, {
      "content-type": "text/css; charset=utf-8",
      "cache-control": "public, max-age=3600",
    }),
  );

  const key = deps.config.sessionKey;
  const keys = key ? new SessionKeys(key, deps.config.apiTokens) : undefined;
  const findToken = tokenLookup(deps.config.apiTokens);
  const namespace = deps.config.namespace ?? DEFAULT_NAMESPACE;
  const sessions = new WeakMap<Context, Session | undefined>();

  const page = async (c: Context<HttpEnv>, node: JSXNode, status: 200 | 401 | 403 = 200) =>
    c.html(await renderDocument(node), status);

  // Every web route: HTML errors and the session if there is one (the security headers are
  // every answer's: headers.ts).
  const web: MiddlewareHandler<HttpEnv> = async (c, next) => {
    c.set("errorPage", async (status, message) => {
      const s = sessions.get(c);
      return c.html(
        await renderDocument(errorPage(status, message, s?.caller, s?.csrf)),
        status as 400,
      );
    });
    if (!keys) throw new HttpError(404, "the web page is off: set PLUMB_SESSION_KEY to turn it on");
    const opened = await keys.open(getCookie(c, SESSION_COOKIE, "host"), deps.now());
    // A signed-out session is no session, in whichever process it was signed out.
    const out = opened !== undefined && (await deps.apps.signedOut(namespace, opened.record));
    if (out) deleteCookie(c, SESSION_COOKIE, { path: "/", secure: true, prefix: "host" });
    sessions.set(c, out ? undefined : opened);
    await next();
  };
  /** The session of a GET, or a redirect to the sign-in form. */
  const viewer = (c: Context<HttpEnv>): Session | undefined => sessions.get(c);
  /** The session of a POST with its CSRF token checked, before anything else is read. */
  const poster = async (
    c: Context<HttpEnv>,
  ): Promise<{ session: Session; form: Record<string, unknown> }> => {
    const session = sessions.get(c);
    if (!session) throw new HttpError(401, "sign in first: your session is missing or expired");
    const form = await readForm(c);
    if (!csrfMatches(session.csrf, str(form["_csrf"]))) {
      throw new HttpError(403, "missing or invalid CSRF token: reload the page and try again");
    }
    return { session, form };
  };

  app.get("/login", web, async (c) => {
    if (viewer(c)) return c.redirect("/", 303);
    return page(c, loginPage({ csrf: await newLoginForm(c, keys!) }));
  });

  app.post("/login", web, limit, async (c) => {
    const form = await readForm(c);
    const nonce = getCookie(c, LOGIN_COOKIE, "host");
    if (!nonce || !csrfMatches(await keys!.loginCsrf(nonce), str(form["_csrf"]))) {
      throw new HttpError(403, "the sign-in form expired or was not ours: reload it and try again");
    }
    const presented = str(form["token"]);
    const token = presented && presented.length <= 4096 ? await findToken(presented) : undefined;
    if (!token) {
      deps.log?.({ msg: "web sign-in refused" });
      const csrf = await newLoginForm(c, keys!);
      return page(c, loginPage({ csrf, error: "That token is not valid." }), 401);
    }
    deleteCookie(c, LOGIN_COOKIE, { path: "/", secure: true, prefix: "host" });
    setCookie(c, SESSION_COOKIE, await keys!.issue(token, deps.now()), {
      ...COOKIE,
      maxAge: SESSION_SECONDS,
    });
    deps.log?.({ msg: "web sign-in", token: token.name });
    return c.redirect("/", 303);
  });

  app.post("/logout", web, limit, async (c) => {
    if (!viewer(c)) return c.redirect("/login", 303);
    const { session } = await poster(c);
    deleteCookie(c, SESSION_COOKIE, { path: "/", secure: true, prefix: "host" });
    try {
      await deps.apps.recordSignOut(namespace, session.record, session.expires);
    } catch (err) {
      const status = (err as { status?: unknown }).status;
      deps.log?.({ msg: "web sign-out not recorded", token: session.caller.name, status });
      throw new HttpError(
        502,
        `Signed out in this browser, but the sign-out could not be recorded in namespace ${namespace}${typeof status === "number" ? ` (HTTP ${status})` : ""}: the session stays valid until ${session.expires.toISOString()} wherever its cookie is kept. plumb records sign-outs as Leases in PLUMB_NAMESPACE: make sure that namespace exists and plumb may create Leases there.`,
      );
    }
    deps.log?.({ msg: "web sign-out", token: session.caller.name });
    return c.redirect("/login", 303);
  });

  app.get("/", web, async (c) => {
    const session = viewer(c);
    if (!session) return c.redirect("/login", 303);
    const namespace = c.req.query("namespace") ?? "";
    const status = c.req.query("status") ?? "";
    if (namespace !== "" && !isDnsLabel(namespace)) {
      throw new HttpError(400, "namespace must be a namespace name");
    }
    if (status !== "" && !(STATUS_FILTERS as readonly string[]).includes(status)) {
      throw new HttpError(400, `status must be one of ${STATUS_FILTERS.join(", ")}`);
    }
    const visible = await appsVisibleTo(deps.apps, session.caller);
    const namespaces = [...new Set(visible.map((a) => a.metadata.namespace))].sort();
    const apps = visible.filter(
      (a) =>
        (namespace === "" || a.metadata.namespace === namespace) &&
        (status === "" || matchesStatus(a, status as StatusFilter)),
    );
    return page(
      c,
      appsPage({
        apps,
        namespaces,
        namespace,
        status: status as StatusFilter | "",
        now: deps.now(),
        ...session,
      }),
    );
  });

  app.get("/apps/:ns/:name", web, async (c) => {
    const session = viewer(c);
    if (!session) return c.redirect("/login", 303);
    const target = await appAt(c, deps, session);
    let events: Awaited<ReturnType<typeof deps.apps.listEvents>> = [];
    let notice: string | undefined;
    try {
      events = await deps.apps.listEvents(target, EVENTS_SHOWN);
    } catch (err) {
      const status = (err as { status?: unknown }).status;
      notice = `Events could not be read${typeof status === "number" ? ` (HTTP ${status})` : ""}.`;
      deps.log?.({ msg: "listing events failed", app: keyOf(target), status });
    }
    // The notice of a request just made, while it is pending (a fixed text, never the query's).
    const requested = c.req.query("requested");
    if (requested !== undefined && requestedOperation(target)?.type === requested) {
      notice = `${requested} requested: the next reconcile carries it out.${notice ? ` ${notice}` : ""}`;
    }
    return page(
      c,
      appPage({ app: target, events, now: deps.now(), ...session, ...(notice ? { notice } : {}) }),
    );
  });

  app.get("/apps/:ns/:name/approve", web, async (c) => {
    const session = viewer(c);
    if (!session) return c.redirect("/login", 303);
    return page(c, approvePage({ app: await appAt(c, deps, session), ...session }));
  });

  app.post("/apps/:ns/:name/operations", web, limit, async (c) => {
    const { session, form } = await poster(c);
    const type = FORM_OPERATIONS[str(form["type"]) ?? ""];
    if (!type)
      throw new HttpError(400, `type must be one of ${Object.keys(FORM_OPERATIONS).join(", ")}`);
    const revision = str(form["revision"]);
    if (revision !== undefined && (revision === "" || revision.length > 256)) {
      throw new HttpError(400, "revision must be 1 to 256 characters");
    }
    const target = await appAt(c, deps, session);
    const op = buildOperation(target, { type, revision }, session.caller.name, deps.now());
    await submitOperation(deps, target, op, "web");
    return c.redirect(`${appPath(target)}?requested=${op.type}`, 303);
  });
}

function appPath(app: App): string {
  return `/apps/${encodeURIComponent(app.metadata.namespace)}/${encodeURIComponent(app.metadata.name)}`;
}

/** The App at :ns/:name: 400 for names no App can have, 403 outside the token's namespaces, 404. */
async function appAt(c: Context<HttpEnv>, deps: HttpDeps, session: Session): Promise<App> {
  const ns = c.req.param("ns") ?? "";
  const name = c.req.param("name") ?? "";
  if (!isDnsLabel(ns) || !isDnsSubdomain(name)) {
    throw new HttpError(400, "not an App name");
  }
  requireNamespace(session.caller, ns);
  const app = await deps.apps.getApp(ns, name);
  if (!app) throw new HttpError(404, `App ${ns}/${name} not found`);
  return app;
}

/** A fresh sign-in nonce in its short-lived cookie; returns the form's CSRF token for it. */
async function newLoginForm(c: Context<HttpEnv>, keys: SessionKeys): Promise<string> {
  const nonce = randomId();
  setCookie(c, LOGIN_COOKIE, nonce, { ...COOKIE, maxAge: LOGIN_SECONDS });
  return keys.loginCsrf(nonce);
}

/** The urlencoded or multipart form; anything else is an empty form (so its CSRF check fails). */
async function readForm(c: Context): Promise<Record<string, unknown>> {
  const type = c.req.header("content-type") ?? "";
  if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(type)) return {};
  try {
    return (await c.req.parseBody()) as Record<string, unknown>;
  } catch {
    throw new HttpError(400, "malformed form body");
  }
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}
