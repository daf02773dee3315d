// Sign out ends the session on the server side, in every plumb process: the sign-out is
// recorded in the cluster (a Lease in PLUMB_NAMESPACE until the session would have expired),
// and `plumb serve` (Node) and the Worker (workerd, wrangler dev) both refuse the old cookie
// after — whichever of them the person signed out on. Real API server; no state in either
// process. Both give every answer the same security headers, a 404 included.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECURITY_HEADERS } from "../../src/http/headers.ts";
import { type Served, startServe } from "../support/serve.ts";
import { startWorkerd, type Workerd } from "../support/workerd.ts";
import { api, createApp, createNamespace, kubeconfig } from "./support.ts";

const S = Date.now().toString(36);
const NAMESPACE = `plumb-web-${S}`;
const APPS = `sessions-${S}`;
const TOKEN = "sessions-admin-token-0123456789";
const SETTINGS = {
  PLUMB_SESSION_KEY: "sessions-test-session-key-0123456789abcdef",
  PLUMB_API_TOKENS: JSON.stringify([{ name: "admin", token: TOKEN }]),
  PLUMB_NAMESPACE: NAMESPACE,
};
const COOKIE = "__Host-plumb_session";

let serve: Served;
let worker: Workerd;

beforeAll(async () => {
  await createNamespace(NAMESPACE);
  await createNamespace(APPS);
  await createApp(APPS, "web", { source: { git: { url: "https://git.example/web.git" } } });
  serve = await startServe(kubeconfig(), SETTINGS);
  worker = await startWorkerd(kubeconfig(), SETTINGS);
});

afterAll(async () => {
  await serve?.stop();
  await worker?.stop();
});

/** Cookies of a response's Set-Cookie headers, name → value ("" when cleared). */
function cookies(res: Response): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of res.headers.getSetCookie()) {
    const [pair = ""] = c.split(";");
    const eq = pair.indexOf("=");
    out.set(pair.slice(0, eq), /Max-Age=0/i.test(c) ? "" : pair.slice(eq + 1));
  }
  return out;
}

const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";

/** GET or POST (a form) `path` on `base` with the session cookie `session`, not following redirects. */
async function visit(
  base: string,
  path: string,
  session: string | undefined,
  form?: Record<string, string>,
): Promise<Response> {
  const headers: Record<string, string> = {};
  if (session) headers["cookie"] = `${COOKIE}=${session}`;
  if (form) headers["content-type"] = "application/x-www-form-urlencoded";
  return fetch(`${base}${path}`, {
    method: form ? "POST" : "GET",
    headers,
    redirect: "manual",
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
  });
}

/** Signs in on `base` as a browser does; returns the session cookie's value. */
async function signIn(base: string): Promise<string> {
  const login = await fetch(`${base}/login`, { redirect: "manual" });
  const nonce = cookies(login).get("__Host-plumb_login") ?? "";
  const res = await fetch(`${base}/login`, {
    method: "POST",
    redirect: "manual",
    headers: {
      cookie: `__Host-plumb_login=${nonce}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ _csrf: csrfOf(await login.text()), token: TOKEN }).toString(),
  });
  expect(res.status).toBe(303);
  const session = cookies(res).get(COOKIE);
  expect(session).toBeTruthy();
  return session ?? "";
}

/** Signs the session out on `base`: the page's form, with its CSRF token. */
async function signOut(base: string, session: string): Promise<Response> {
  const page = await visit(base, "/", session);
  expect(page.status).toBe(200);
  return visit(base, "/logout", session, { _csrf: csrfOf(await page.text()) });
}

/** What the old cookie gets on `base`: the list page's status and where it redirects. */
async function withOldCookie(base: string, session: string) {
  const list = await visit(base, "/", session);
  const app = await visit(base, `/apps/${APPS}/web`, session);
  const post = await visit(base, `/apps/${APPS}/web/operations`, session, {
    _csrf: "any",
    type: "sync",
  });
  return {
    list: [list.status, list.headers.get("location")],
    app: [app.status, app.headers.get("location")],
    post: post.status,
  };
}

const REFUSED = { list: [303, "/login"], app: [303, "/login"], post: 401 };

/** The sign-out records in NAMESPACE: their names and how long each is held. */
async function records(): Promise<Array<{ name: string; seconds: number }>> {
  const list = await api(
    "GET",
    `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases?labelSelector=plumb.dev/signed-out-session`,
  );
  return (
    list.items as Array<{ metadata: { name: string }; spec: { leaseDurationSeconds: number } }>
  ).map((l) => ({ name: l.metadata.name, seconds: l.spec.leaseDurationSeconds }));
}

describe("sign-out ends the session in every plumb process", () => {
  it("signed out on plumb serve: the old cookie gets 303 /login (GET) and 401 (POST) from plumb serve and from the Worker", async () => {
    const session = await signIn(serve.base);
    // One session, valid in both processes (same key, same tokens).
    expect((await visit(serve.base, "/", session)).status).toBe(200);
    expect((await visit(worker.base, "/", session)).status).toBe(200);

    const out = await signOut(serve.base, session);
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/login");
    expect(cookies(out).get(COOKIE)).toBe("");

    expect(await withOldCookie(serve.base, session)).toEqual(REFUSED);
    expect(await withOldCookie(worker.base, session)).toEqual(REFUSED);
    const held = await records();
    expect(held).toHaveLength(1);
    expect(held[0]?.name).toMatch(/^plumb-signout-[0-9a-f]{32}$/);
    // Held as long as the session had left (8 hours from sign-in, a few seconds ago).
    expect(held[0]?.seconds).toBeGreaterThan(8 * 3600 - 600);
    expect(held[0]?.seconds).toBeLessThanOrEqual(8 * 3600);
  });

  it("signed out on the Worker: plumb serve refuses the old cookie too; a new sign-in works", async () => {
    const session = await signIn(worker.base);
    expect((await visit(serve.base, "/", session)).status).toBe(200);
    const out = await signOut(worker.base, session);
    expect(out.status).toBe(303);
    expect(await withOldCookie(worker.base, session)).toEqual(REFUSED);
    expect(await withOldCookie(serve.base, session)).toEqual(REFUSED);
    expect(await records()).toHaveLength(2);

    const again = await signIn(serve.base);
    expect((await visit(serve.base, "/", again)).status).toBe(200);
    expect((await visit(worker.base, "/", again)).status).toBe(200);
  });

  it("records of sessions expired since are deleted at the next sign-out, the live ones kept", async () => {
    const expired = "plumb-signout-0000000000000000000000000000dead";
    const at = new Date(Date.now() - 9 * 3600 * 1000).toISOString().replace("Z", "000Z");
    await api("POST", `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`, {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: expired, labels: { "plumb.dev/signed-out-session": "true" } },
      spec: { holderIdentity: "signed-out", leaseDurationSeconds: 3600, renewTime: at },
    });
    const before = (await records()).map((r) => r.name);
    expect(before).toContain(expired);
    const session = await signIn(serve.base);
    expect((await signOut(serve.base, session)).status).toBe(303);
    const after = (await records()).map((r) => r.name);
    expect(after).not.toContain(expired);
    expect(after).toHaveLength(before.length);
    for (const name of before.filter((n) => n !== expired)) expect(after).toContain(name);
  });
});

describe("every answer of both processes carries the same security headers", () => {
  it.each([
    ["/healthz", 200],
    ["/login", 200],
    ["/", 303],
    ["/api/v1/apps", 401],
    ["/no/such/%3Cscript%3Ealert(1)%3C/script%3E", 404],
  ])("%s", async (path, status) => {
    for (const base of [serve.base, worker.base]) {
      const res = await fetch(`${base}${path}`, { redirect: "manual" });
      expect({ base, status: res.status }).toEqual({ base, status });
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
        expect({ base, name, value: res.headers.get(name) }).toEqual({ base, name, value });
      }
      expect(res.headers.get("cache-control")).toBe("no-store");
      if (status === 404) {
        const body = (await res.json()) as { message: string };
        expect(body.message).toBe("no route for GET /no/such/%3Cscript%3Ealert(1)%3C/script%3E");
      }
    }
  });
});
