import { describe, expect, it } from "vitest";
import { FakeKube, testApp } from "../../test/support/fake-kube.ts";
import type { AppStatus } from "../app/index.ts";
import { KubeApiError } from "../core/index.ts";
import { createHttpApp } from "./app.ts";
import type { HttpConfig } from "./config.ts";

const ADMIN = "admin-token-0123456789abcdef";
const TEAM_A = "team-a-token-0123456789abcdef";
const KEY = "k".repeat(40);
const HELD = "4444444444444444444444444444444444444444";
const SHA2 = "2222222222222222222222222222222222222222";
const SHA3 = "3333333333333333333333333333333333333333";
const NOW = new Date("2026-03-04T05:06:07.000Z");
const CONFIG: HttpConfig = {
  apiTokens: [
    { name: "admin", token: ADMIN },
    { name: "alice", token: TEAM_A, namespaces: ["team-a"] },
  ],
  sessionKey: KEY,
};
const held: AppStatus = {
  syncStatus: "Held",
  healthStatus: "Healthy",
  revision: SHA3,
  heldRevision: HELD,
  previousRevisions: [{ revision: SHA2, deployedAt: "2026-03-01T00:00:00Z" }],
  resources: [
    {
      apiVersion: "v1",
      kind: "Service",
      namespace: "team-a",
      name: "web",
      status: "OutOfSync",
      message: "will be created",
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      namespace: "team-a",
      name: "web",
      status: "OutOfSync",
      health: "Healthy",
      message: "will change: spec.replicas, spec.template.spec.containers[name=web].image",
      changes: [
        { path: "spec.replicas", desired: "3", live: "2" },
        {
          path: "spec.template.spec.containers[name=web].image",
          desired: "web:v6",
          live: "web:v5",
          manager: "kubectl-edit",
        },
      ],
    },
    {
      apiVersion: "v1",
      kind: "Secret",
      namespace: "team-a",
      name: "web-env",
      status: "OutOfSync",
      message: "will change: data.PASSWORD",
      changes: [{ path: "data.PASSWORD" }],
    },
  ],
  conditions: [
    {
      type: "Ready",
      status: "True",
      reason: "Held",
      message: "revision <script>alert(1)</script> is held",
      lastTransitionTime: "2026-03-04T05:00:00Z",
    },
  ],
};

/** A browser's cookie jar, just enough: name=value pairs from Set-Cookie. */
function client(
  config: HttpConfig = CONFIG,
  clock = { now: NOW },
  apps = [
    testApp("team-a", "web", { status: held }),
    testApp("team-a", "plain", {
      status: { syncStatus: "Synced", healthStatus: "Healthy", failures: 2 },
    }),
    testApp("team-b", "api", { status: { syncStatus: "Synced", healthStatus: "Degraded" } }),
  ],
) {
  const kube = new FakeKube(apps);
  const app = createHttpApp({ apps: kube, config, trigger: kube.trigger, now: () => clock.now });
  const jar = new Map<string, string>();
  const setCookies: string[] = [];
  const request = async (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
    const res = await app.request(path, { ...init, headers });
    for (const c of res.headers.getSetCookie()) {
      setCookies.push(c);
      const [pair] = c.split(";");
      const [k, v] = pair!.split("=") as [string, string];
      if (/Max-Age=0/i.test(c) || v === "") jar.delete(k);
      else jar.set(k, v);
    }
    return res;
  };
  const form = (path: string, fields: Record<string, string>) =>
    request(path, {
      method: "POST",
      body: new URLSearchParams(fields).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
  const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
  const signIn = async (token: string) => {
    const login = await (await request("/login")).text();
    return form("/login", { _csrf: csrfOf(login), token });
  };
  return { kube, app, jar, setCookies, request, form, csrfOf, signIn, clock };
}

describe("web page: sign-in", () => {
  it("is off (404 page) without PLUMB_SESSION_KEY", async () => {
    const { request } = client({ apiTokens: CONFIG.apiTokens });
    const res = await request("/");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await res.text()).toContain("the web page is off: set PLUMB_SESSION_KEY");
  });

  it("sends a visitor without a session to the sign-in form", async () => {
    const { request } = client();
    const res = await request("/");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/login");
  });

  it("a valid token sets a signed, expiring, HttpOnly, Secure, SameSite=Strict session cookie", async () => {
    const { signIn, setCookies, request } = client();
    const res = await signIn(ADMIN);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/");
    const session = setCookies.find((c) => c.startsWith("__Host-plumb_session="))!;
    expect(session).toMatch(/; Max-Age=28800/);
    expect(session).toMatch(/; Path=\//);
    expect(session).toMatch(/; HttpOnly/);
    expect(session).toMatch(/; Secure/);
    expect(session).toMatch(/; SameSite=Strict/);
    expect(session).not.toContain(ADMIN);
    const list = await request("/");
    expect(list.status).toBe(200);
    expect(list.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(list.headers.get("cache-control")).toBe("no-store");
  });

  it("a wrong token is refused with the form again, and no session", async () => {
    const { signIn, jar } = client();
    const res = await signIn("wrong-token-0123456789abcdef");
    expect(res.status).toBe(401);
    expect(await res.text()).toContain("That token is not valid.");
    expect(jar.has("__Host-plumb_session")).toBe(false);
  });

  it("a sign-in posted without the form's CSRF token is refused (403)", async () => {
    const { request, form, jar } = client();
    await request("/login");
    const res = await form("/login", { token: ADMIN });
    expect(res.status).toBe(403);
    expect(jar.has("__Host-plumb_session")).toBe(false);
    const { form: bare } = client();
    expect((await bare("/login", { token: ADMIN, _csrf: "x" })).status).toBe(403);
  });

  it("a tampered, expired or revoked session is no session", async () => {
    const c = client();
    await c.signIn(ADMIN);
    const good = c.jar.get("__Host-plumb_session")!;
    const [payload, sig] = good.split(".") as [string, string];
    const forged = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/")));
    forged.n = "alice";
    const tampered = `${btoa(JSON.stringify(forged)).replace(/=+$/, "")}.${sig}`;
    c.jar.set("__Host-plumb_session", tampered);
    expect((await c.request("/")).status).toBe(303);
    c.jar.set("__Host-plumb_session", good);
    expect((await c.request("/")).status).toBe(200);
    c.clock.now = new Date(NOW.getTime() + 8 * 3600 * 1000 + 1000);
    expect((await c.request("/")).status).toBe(303);
    // The token rotated (same name, new value): its sessions end.
    const rotated = client({ ...CONFIG, apiTokens: [{ name: "admin", token: `${ADMIN}-new` }] });
    rotated.jar.set("__Host-plumb_session", good);
    expect((await rotated.request("/")).status).toBe(303);
  });

  it("sign-out needs the CSRF token and clears the session", async () => {
    const c = client();
    await c.signIn(ADMIN);
    const html = await (await c.request("/")).text();
    expect((await c.form("/logout", {})).status).toBe(403);
    const res = await c.form("/logout", { _csrf: c.csrfOf(html) });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/login");
    expect((await c.request("/")).status).toBe(303);
  });
});

describe("web page: sign-out ends the session on the server side", () => {
  it("the same cookie is refused after sign-out (also replayed from elsewhere), by any process of the cluster", async () => {
    const c = client();
    await c.signIn(ADMIN);
    const cookie = c.jar.get("__Host-plumb_session")!;
    const html = await (await c.request("/")).text();
    expect((await c.form("/logout", { _csrf: c.csrfOf(html) })).status).toBe(303);
    const [record] = [...c.kube.signOuts];
    expect(record?.[0]).toMatch(/^plumb-system\/plumb-signout-[0-9a-f]{32}$/);
    // Kept until the session would have expired (8 hours after sign-in), not longer.
    expect(record?.[1].toISOString()).toBe("2026-03-04T13:06:07.000Z");
    expect(record?.[0]).not.toContain(cookie.slice(0, 12));

    // The old cookie, replayed (a copy kept before signing out): a GET goes to sign in, the
    // cookie is cleared, a POST is 401 and changes nothing.
    c.jar.set("__Host-plumb_session", cookie);
    const again = await c.request("/");
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe("/login");
    expect(again.headers.getSetCookie().join()).toMatch(/__Host-plumb_session=;.*Max-Age=0/);
    c.jar.set("__Host-plumb_session", cookie);
    const post = await c.form("/apps/team-a/web/operations", {
      _csrf: c.csrfOf(html),
      type: "sync",
    });
    expect(post.status).toBe(401);
    expect(c.kube.calls.setOperation).toEqual([]);

    // Another process of the same cluster (same key, same tokens, its own memory) refuses it.
    const other = client();
    for (const [k, v] of c.kube.signOuts) other.kube.signOuts.set(k, v);
    other.jar.set("__Host-plumb_session", cookie);
    expect((await other.request("/")).status).toBe(303);
    // A session signed in afterwards is another session: it works.
    await c.signIn(ADMIN);
    expect((await c.request("/")).status).toBe(200);
  });

  it("records the sign-out in PLUMB_NAMESPACE", async () => {
    const c = client({ ...CONFIG, namespace: "plumb-web" });
    await c.signIn(ADMIN);
    const html = await (await c.request("/")).text();
    await c.form("/logout", { _csrf: c.csrfOf(html) });
    expect([...c.kube.signOuts.keys()][0]).toMatch(/^plumb-web\//);
  });

  it("a sign-out that cannot be recorded says so (502), and still clears the cookie here", async () => {
    const c = client();
    await c.signIn(ADMIN);
    const html = await (await c.request("/")).text();
    c.kube.fail.recordSignOut = new KubeApiError(
      404,
      "NotFound",
      'namespaces "plumb-system" not found',
    );
    const res = await c.form("/logout", { _csrf: c.csrfOf(html) });
    expect(res.status).toBe(502);
    const page = await res.text();
    expect(page).toContain(
      "Signed out in this browser, but the sign-out could not be recorded in namespace plumb-system (HTTP 404)",
    );
    expect(page).toContain("the session stays valid until 2026-03-04T13:06:07.000Z");
    expect(c.jar.has("__Host-plumb_session")).toBe(false);
  });

  it("when the record cannot be read, the page fails (502) rather than let the cookie in", async () => {
    const c = client();
    await c.signIn(ADMIN);
    c.kube.fail.signedOut = new KubeApiError(503, "ServiceUnavailable", "no answer");
    const res = await c.request("/");
    expect(res.status).toBe(502);
    expect(c.kube.calls.listApps).toEqual([]);
  });
});

describe("web page: Apps and operations", () => {
  it("lists Apps with badges and filters; a namespace-limited token sees its namespaces only", async () => {
    const admin = client();
    await admin.signIn(ADMIN);
    const all = await (await admin.request("/")).text();
    for (const name of ["team-a", "web", "plain", "team-b", "api", "Held", "Failed", "3333333"]) {
      expect(all).toContain(name);
    }
    const heldOnly = await (await admin.request("/?status=held")).text();
    expect(heldOnly).toContain('href="/apps/team-a/web"');
    expect(heldOnly).not.toContain('href="/apps/team-a/plain"');
    const teamB = await (await admin.request("/?namespace=team-b")).text();
    expect(teamB).toContain('href="/apps/team-b/api"');
    expect(teamB).not.toContain('href="/apps/team-a/web"');
    const bad = await admin.request("/?status=%3Cscript%3E");
    expect(bad.status).toBe(400);
    expect(await bad.text()).not.toContain("<script>");

    const alice = client();
    await alice.signIn(TEAM_A);
    const mine = await (await alice.request("/")).text();
    expect(mine).toContain('href="/apps/team-a/web"');
    expect(mine).not.toContain("team-b");
    expect((await alice.request("/apps/team-b/api")).status).toBe(403);
    expect(alice.kube.calls.getApp).toEqual([]);
  });

  it("shows the source of every kind, in the list and on the App's page", async () => {
    const of = (name: string, source: Record<string, unknown>) =>
      testApp("team-a", name, { spec: { source } });
    const c = client(CONFIG, { now: NOW }, [
      testApp("team-a", "git", { url: "https://git.example.com/org/web.git", ref: "main" }),
      of("image", { image: { repository: "registry.example.com/org/web", tag: "1.4" } }),
      of("chart", {
        chart: { repository: "https://charts.example.com/", name: "podinfo", version: "6.x" },
      }),
      of("app", {
        app: {
          services: [{ name: "web", image: "registry.example.com/org/web", tag: "^1.2" }],
          jobs: [{ name: "nightly", schedule: "0 3 * * *", image: "registry.example.com/org/job" }],
        },
      }),
      of("none", {}),
    ]);
    await c.signIn(ADMIN);
    // The Source cell, without its line-break opportunities (<wbr/> after "/" and before "@").
    const list = (await (await c.request("/")).text()).replaceAll("<wbr/>", "");
    const cell = (text: string) => `<td class="src"><code>${text}</code></td>`;
    expect(list).toContain(cell("git.example.com/org/web.git@main"));
    expect(list).toContain(cell("registry.example.com/org/web@1.4"));
    expect(list).toContain(cell("charts.example.com/podinfo@6.x"));
    expect(list).toContain(
      cell("registry.example.com/org/web, registry.example.com/org/job@^1.2, latest"),
    );
    expect(list).toContain(cell("—"));
    const page = (await (await c.request("/apps/team-a/chart")).text()).replaceAll("<wbr/>", "");
    expect(page).toContain("<code>https://charts.example.com/podinfo@6.x</code>");
  });

  it("escapes what the cluster says", async () => {
    const c = client();
    await c.signIn(ADMIN);
    const html = await (await c.request("/apps/team-a/web")).text();
    expect(html).toContain("revision &lt;script&gt;alert(1)&lt;/script&gt; is held");
    expect(html).not.toContain("<script>");
  });

  it("the approve page shows the preview, and approving writes the API's operation", async () => {
    const c = client();
    await c.signIn(TEAM_A);
    const page = await (await c.request("/apps/team-a/web/approve")).text();
    expect(page).toContain("Will create");
    expect(page).toContain("Service team-a/web");
    expect(page).toContain("Will change");
    // Each changed field with its live and desired value; a Secret's values are never there.
    const row = (...cells: string[]) =>
      `<tr>${cells.map((c, i) => (i === 0 ? `<td>${c}</td>` : `<td><code>${c}</code></td>`)).join("")}</tr>`;
    expect(page).toContain('<th scope="col">Live</th><th scope="col">Desired</th>');
    expect(page).toContain(row("Deployment team-a/web", "spec.replicas", "2", "3"));
    expect(page).toContain(
      row(
        "Deployment team-a/web",
        "spec.template.spec.containers[name=web].image",
        "web:v5",
        "web:v6",
      ),
    );
    expect(page).toContain(row("Secret team-a/web-env", "data.PASSWORD", "(hidden)", "(hidden)"));
    const res = await c.form("/apps/team-a/web/operations", {
      _csrf: c.csrfOf(page),
      type: "approve",
      revision: HELD,
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/apps/team-a/web?requested=Approve");
    expect(c.kube.calls.setOperation).toEqual([
      {
        app: "team-a/web",
        operation: {
          id: expect.any(String),
          type: "Approve",
          revision: HELD,
          requestedBy: "alice",
          requestedAt: NOW.toISOString(),
        },
      },
    ]);
    expect(c.kube.calls.trigger).toEqual([
      { apps: [{ namespace: "team-a", name: "web" }], reason: "web: Approve requested by alice" },
    ]);
    const after = await (await c.request("/apps/team-a/web?requested=Approve")).text();
    expect(after).toContain("Approve requested");
    expect(after).toContain('http-equiv="refresh"');
    expect(after).toContain("OperationRequested");
  });

  it("a form posted without the CSRF token is refused (403) before the cluster is read", async () => {
    const c = client();
    await c.signIn(ADMIN);
    const res = await c.form("/apps/team-a/web/operations", { type: "sync" });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("missing or invalid CSRF token");
    const json = await c.request("/apps/team-a/web/operations", {
      method: "POST",
      body: JSON.stringify({ type: "sync" }),
      headers: { "content-type": "application/json" },
    });
    expect(json.status).toBe(403);
    expect(c.kube.calls.getApp).toEqual([]);
    expect(c.kube.calls.setOperation).toEqual([]);
  });

  it("a POST without a session is 401; a stale approval and a bad type are clear errors", async () => {
    const anon = client();
    expect((await anon.form("/apps/team-a/web/operations", { type: "sync" })).status).toBe(401);
    const c = client();
    await c.signIn(ADMIN);
    const csrf = c.csrfOf(await (await c.request("/")).text());
    const stale = await c.form("/apps/team-a/web/operations", {
      _csrf: csrf,
      type: "approve",
      revision: SHA2,
    });
    expect(stale.status).toBe(409);
    expect(await stale.text()).toContain(`stale revision: held is ${HELD.slice(0, 7)}, not`);
    const bad = await c.form("/apps/team-a/web/operations", { _csrf: csrf, type: "explode" });
    expect(bad.status).toBe(400);
    const rollback = await c.form("/apps/team-a/web/operations", {
      _csrf: csrf,
      type: "rollback",
      revision: SHA2,
    });
    expect(rollback.status).toBe(303);
    expect(c.kube.calls.setOperation.map((s) => s.operation["type"])).toEqual(["Rollback"]);
  });

  it("never puts a token in a page or a URL", async () => {
    const c = client();
    await c.signIn(ADMIN);
    const pages = await Promise.all(
      ["/", "/apps/team-a/web", "/apps/team-a/web/approve"].map((p) => c.request(p)),
    );
    for (const res of pages) {
      expect(await res.text()).not.toContain(ADMIN);
      expect(res.headers.get("location") ?? "").not.toContain(ADMIN);
    }
  });
});
