import { describe, expect, it } from "vitest";
import { FakeKube, testApp } from "../../test/support/fake-kube.ts";
import type { App, AppStatus } from "../app/index.ts";
import { KubeApiError } from "../core/index.ts";
import { createHttpApp } from "./app.ts";
import type { HttpConfig } from "./config.ts";

const ADMIN = "admin-token-0123456789abcdef";
const TEAM_A = "team-a-token-0123456789abcdef";
const CONFIG: HttpConfig = {
  apiTokens: [
    { name: "admin", token: ADMIN },
    { name: "alice", token: TEAM_A, namespaces: ["team-a"] },
  ],
};
const NOW = "2026-03-04T05:06:07.000Z";
const SHA1 = "1111111111111111111111111111111111111111";
const SHA2 = "2222222222222222222222222222222222222222";
const SHA3 = "3333333333333333333333333333333333333333";
const HELD = "4444444444444444444444444444444444444444";

const status: AppStatus = {
  syncStatus: "Held",
  healthStatus: "Healthy",
  healthReason: "all 3 resources healthy",
  revision: SHA3,
  observedRevision: HELD,
  heldRevision: HELD,
  previousRevisions: [
    { revision: SHA2, deployedAt: "2026-03-01T00:00:00Z" },
    { revision: SHA1, deployedAt: "2026-02-01T00:00:00Z" },
  ],
  lastSyncedAt: "2026-03-03T00:00:00Z",
  nextReconcileAt: "2026-03-04T05:11:07Z",
  conditions: [
    {
      type: "Ready",
      status: "True",
      reason: "Synced",
      message: "ok",
      lastTransitionTime: "2026-03-03T00:00:00Z",
    },
  ],
};

function setup(extra: App[] = []) {
  const kube = new FakeKube([
    ...extra,
    testApp("team-a", "web", { status }),
    testApp("team-a", "frozen", { status, spec: { freeze: true } }),
    testApp("team-a", "fresh"),
    testApp("team-b", "api", { status }),
  ]);
  const log: Array<Record<string, unknown>> = [];
  const app = createHttpApp({
    apps: kube,
    config: CONFIG,
    trigger: kube.trigger,
    now: () => new Date(NOW),
    log: (e) => log.push(e),
  });
  const call = (method: string, p: string, token?: string, body?: unknown) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (token) headers["authorization"] = `Bearer ${token}`;
    const init: RequestInit = { method, headers };
    if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
    return app.request(p, init);
  };
  return { kube, app, call, log };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const WEB = "/api/v1/namespaces/team-a/apps/web";

describe("GET /healthz and unknown routes", () => {
  it("healthz needs no auth", async () => {
    const { call } = setup();
    const res = await call("GET", "/healthz");
    expect(res.status).toBe(200);
    // This setup has API tokens but no webhook secret: /healthz says so.
    expect(await res.json()).toEqual({
      status: "ok",
      warnings: [
        "no webhook secret is set (GITHUB_WEBHOOK_SECRET, GITLAB_WEBHOOK_TOKEN, GITEA_WEBHOOK_SECRET): every /webhooks route answers 404",
      ],
    });
  });

  it("unknown routes are 404 JSON", async () => {
    const { call } = setup();
    const res = await call("GET", "/nope");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: "no route for GET /nope" });
  });
});

describe("authentication and authorization", () => {
  it.each([
    [
      "no Authorization header",
      undefined,
      "missing bearer token: send Authorization: Bearer <token>",
    ],
    ["a wrong token", "wrong-token-0123456789abcdef", "invalid bearer token"],
    ["a token prefix", ADMIN.slice(0, -1), "invalid bearer token"],
  ])("401 for %s, before the cluster is touched", async (_, token, message) => {
    const { kube, call } = setup();
    for (const [method, p] of [
      ["GET", "/api/v1/apps"],
      ["GET", WEB],
      ["POST", `${WEB}/approve`],
      ["POST", `${WEB}/operations`],
    ] as const) {
      const res = await call(method, p, token, method === "POST" ? { type: "sync" } : undefined);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ message });
    }
    expect(kube.calls).toEqual({
      setOperation: [],
      emitEvent: [],
      listApps: [],
      getApp: [],
      trigger: [],
    });
  });

  it("401 for a non-Bearer scheme", async () => {
    const { app } = setup();
    const res = await app.request("/api/v1/apps", {
      headers: { authorization: `Basic ${btoa(`x:${ADMIN}`)}` },
    });
    expect(res.status).toBe(401);
  });

  it("403 for a token of another namespace, with zero cluster calls", async () => {
    const { kube, call } = setup();
    const base = "/api/v1/namespaces/team-b/apps/api";
    const get = await call("GET", base, TEAM_A);
    const approve = await call("POST", `${base}/approve`, TEAM_A, { revision: HELD });
    const op = await call("POST", `${base}/operations`, TEAM_A, { type: "sync" });
    for (const res of [get, approve, op]) {
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ message: 'token "alice" may not use namespace "team-b"' });
    }
    expect(kube.calls.setOperation).toEqual([]);
    expect(kube.calls.getApp).toEqual([]);
    expect(kube.calls.trigger).toEqual([]);
  });

  it("never logs tokens", async () => {
    const { call, log } = setup();
    await call("POST", `${WEB}/approve`, TEAM_A, {});
    await call("GET", WEB, "wrong-token-0123456789abcdef");
    expect(JSON.stringify(log)).not.toMatch(/token-0123/);
  });
});

describe("GET apps", () => {
  it("lists the caller's namespaces only", async () => {
    const { kube, call } = setup();
    const res = await call("GET", "/api/v1/apps", TEAM_A);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { items: Array<{ namespace: string; name: string }> };
    expect(body.items.map((i) => `${i.namespace}/${i.name}`)).toEqual([
      "team-a/fresh",
      "team-a/frozen",
      "team-a/web",
    ]);
    expect(kube.calls.listApps).toEqual(["team-a"]);

    const all = (await (await call("GET", "/api/v1/apps", ADMIN)).json()) as { items: unknown[] };
    expect(all.items).toHaveLength(4);
  });

  it("returns one App's summary", async () => {
    const { call } = setup();
    const res = await call("GET", WEB, TEAM_A);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      namespace: "team-a",
      name: "web",
      syncStatus: "Held",
      healthStatus: "Healthy",
      healthReason: "all 3 resources healthy",
      ready: { status: "True", reason: "Synced", message: "ok" },
      revision: SHA3,
      shortRevision: SHA3.slice(0, 7),
      observedRevision: HELD,
      heldRevision: HELD,
      previousRevisions: status.previousRevisions,
      operationState: null,
      conditions: status.conditions,
      lastSyncedAt: "2026-03-03T00:00:00Z",
      // Derived (status keeps no schedule): no generation observed yet, so due now.
      nextReconcileAt: new Date(NOW).toISOString(),
      nextSyncWindow: null,
      nextSyncWindowMessage: null,
      resources: status.resources ?? [],
      drift: [],
    });
  });

  it("a never-reconciled App has nulls and empty lists", async () => {
    const { call } = setup();
    const body = (await (
      await call("GET", "/api/v1/namespaces/team-a/apps/fresh", ADMIN)
    ).json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      syncStatus: null,
      ready: null,
      shortRevision: null,
      heldRevision: null,
      previousRevisions: [],
      conditions: [],
      resources: [],
      drift: [],
    });
  });

  it("404 for an unknown App", async () => {
    const { call } = setup();
    const res = await call("GET", "/api/v1/namespaces/team-a/apps/ghost", TEAM_A);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: "App team-a/ghost not found" });
  });

  it.each([
    ["an upper-case name", "team-a/Team_A"],
    ["a NUL byte", "team-a/web%00x"],
    ["a name over 253 characters", `team-a/${"a".repeat(254)}`],
    ["a namespace that is not a DNS label", "team.a/web"],
  ])("400 for a name no App can have: %s, before the cluster is read", async (_what, path) => {
    const { kube, call } = setup();
    const [ns, name] = path.split("/") as [string, string];
    const id = JSON.stringify(decodeURIComponent(path));
    for (const [method, suffix] of [
      ["GET", ""],
      ["POST", "/operations"],
    ] as const) {
      const body = method === "POST" ? { type: "sync" } : undefined;
      const res = await call(method, `/api/v1/namespaces/${ns}/apps/${name}${suffix}`, ADMIN, body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ message: `not an App name: ${id.slice(0, 300)}` });
    }
    expect(kube.calls.setOperation).toEqual([]);
  });
});

describe("POST approve", () => {
  it("writes an Approve operation of the held revision, emits an Event and triggers", async () => {
    const { kube, call } = setup();
    const res = await call("POST", `${WEB}/approve`, TEAM_A, { revision: HELD });
    expect(res.status).toBe(202);
    const { operation } = (await res.json()) as { operation: Record<string, unknown> };
    expect(operation).toEqual({
      id: expect.stringMatching(UUID),
      type: "Approve",
      revision: HELD,
      requestedBy: "alice",
      requestedAt: NOW,
    });
    expect(kube.calls.setOperation).toEqual([{ app: "team-a/web", operation }]);
    expect(kube.calls.emitEvent).toEqual([
      {
        app: "team-a/web",
        type: "Normal",
        reason: "OperationRequested",
        message: `Approve of ${HELD} requested by alice`,
      },
    ]);
    expect(kube.calls.trigger).toEqual([
      { apps: [{ namespace: "team-a", name: "web" }], reason: "api: Approve requested by alice" },
    ]);
  });

  it("accepts an empty body (approve whatever is held)", async () => {
    const { kube, call } = setup();
    const res = await call("POST", `${WEB}/approve`, ADMIN);
    expect(res.status).toBe(202);
    expect(kube.calls.setOperation[0]?.operation).toMatchObject({
      revision: HELD,
      requestedBy: "admin",
    });
  });

  it("accepts the short revision Slack shows, and writes the full one", async () => {
    const { call } = setup();
    const res = await call("POST", `${WEB}/approve`, TEAM_A, { revision: HELD.slice(0, 7) });
    expect(res.status).toBe(202);
    expect(((await res.json()) as { operation: { revision: string } }).operation.revision).toBe(
      HELD,
    );
  });

  it("409 for a stale revision", async () => {
    const { kube, call } = setup();
    const res = await call("POST", `${WEB}/approve`, TEAM_A, { revision: SHA2 });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      message: `stale revision: held is ${HELD.slice(0, 7)}, not "${SHA2}"`,
      heldRevision: HELD,
    });
    expect(kube.calls.setOperation).toEqual([]);
    expect(kube.calls.trigger).toEqual([]);
  });

  it("409 for a prefix of the held revision too short to name it, saying so", async () => {
    const { kube, call } = setup();
    const res = await call("POST", `${WEB}/approve`, TEAM_A, { revision: HELD.slice(0, 5) });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      message: `stale revision: held is ${HELD.slice(0, 7)}, not "${HELD.slice(0, 5)}" (a prefix needs at least 7 hex characters)`,
      heldRevision: HELD,
    });
    expect(kube.calls.setOperation).toEqual([]);
  });

  it("409 when nothing is held", async () => {
    const { kube, call } = setup();
    const res = await call("POST", "/api/v1/namespaces/team-a/apps/fresh/approve", TEAM_A, {});
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ message: "nothing is held for approval" });
    expect(kube.calls.setOperation).toEqual([]);
  });

  it("409 when frozen", async () => {
    const { kube, call } = setup();
    const res = await call("POST", "/api/v1/namespaces/team-a/apps/frozen/approve", TEAM_A, {});
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      message: "App is frozen: operations are refused while spec.freeze is true",
    });
    expect(kube.calls.setOperation).toEqual([]);
  });

  it("404 for an unknown App, 400 for malformed JSON or a bad shape", async () => {
    const { kube, call } = setup();
    const missing = await call("POST", "/api/v1/namespaces/team-a/apps/ghost/approve", TEAM_A, {});
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ message: "App team-a/ghost not found" });

    const malformed = await call("POST", `${WEB}/approve`, TEAM_A, "{revision:");
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ message: "malformed JSON body" });

    const shape = await call("POST", `${WEB}/approve`, TEAM_A, { revision: 42 });
    expect(shape.status).toBe(400);
    expect(await shape.json()).toMatchObject({
      message: "invalid request body",
      issues: [{ path: "body.revision" }],
    });
    expect(kube.calls.setOperation).toEqual([]);
  });
});

describe("POST reject", () => {
  it("writes a Reject operation of the held revision, like approve", async () => {
    const { kube, call } = setup();
    const res = await call("POST", `${WEB}/reject`, TEAM_A, { revision: HELD });
    expect(res.status).toBe(202);
    const { operation } = (await res.json()) as { operation: Record<string, unknown> };
    expect(operation).toEqual({
      id: expect.stringMatching(UUID),
      type: "Reject",
      revision: HELD,
      requestedBy: "alice",
      requestedAt: NOW,
    });
    expect(kube.calls.setOperation).toEqual([{ app: "team-a/web", operation }]);
    expect(kube.calls.emitEvent[0]?.message).toBe(`Reject of ${HELD} requested by alice`);
    expect(kube.calls.trigger).toEqual([
      { apps: [{ namespace: "team-a", name: "web" }], reason: "api: Reject requested by alice" },
    ]);
  });
  it("409 for a stale revision or nothing held; 403 in another namespace", async () => {
    const { kube, call } = setup();
    const stale = await call("POST", `${WEB}/reject`, TEAM_A, { revision: SHA2 });
    expect(stale.status).toBe(409);
    expect(await stale.json()).toEqual({
      message: `stale revision: held is ${HELD.slice(0, 7)}, not "${SHA2}"`,
      heldRevision: HELD,
    });
    const none = await call("POST", "/api/v1/namespaces/team-a/apps/fresh/reject", TEAM_A);
    expect(none.status).toBe(409);
    const other = await call("POST", "/api/v1/namespaces/team-b/apps/api/reject", TEAM_A);
    expect(other.status).toBe(403);
    expect(kube.calls.setOperation).toEqual([]);
  });
});

describe("POST operations", () => {
  it.each([
    ["sync", "Sync"],
    ["SYNC", "Sync"],
    ["Restart", "Restart"],
    ["deploy", "Deploy"],
  ])("type %s → %s", async (type, expected) => {
    const { kube, call } = setup();
    const res = await call("POST", `${WEB}/operations`, TEAM_A, { type });
    expect(res.status).toBe(202);
    const { operation } = (await res.json()) as { operation: Record<string, unknown> };
    expect(operation).toEqual({
      id: expect.stringMatching(UUID),
      type: expected,
      requestedBy: "alice",
      requestedAt: NOW,
    });
    expect(kube.calls.setOperation).toEqual([{ app: "team-a/web", operation }]);
    expect(kube.calls.emitEvent[0]?.message).toBe(`${expected} requested by alice`);
    expect(kube.calls.trigger).toHaveLength(1);
  });

  it("rollback without a revision takes previousRevisions[0]", async () => {
    const { kube, call } = setup();
    const res = await call("POST", `${WEB}/operations`, TEAM_A, { type: "rollback" });
    expect(res.status).toBe(202);
    expect(((await res.json()) as { operation: unknown }).operation).toMatchObject({
      type: "Rollback",
      revision: SHA2,
    });
    expect(kube.calls.emitEvent[0]?.message).toBe(`Rollback to ${SHA2} requested by alice`);
  });

  it("rollback to an older listed revision", async () => {
    const { kube, call } = setup();
    const res = await call("POST", `${WEB}/operations`, TEAM_A, {
      type: "Rollback",
      revision: SHA1,
    });
    expect(res.status).toBe(202);
    expect(kube.calls.setOperation[0]?.operation).toMatchObject({
      type: "Rollback",
      revision: SHA1,
    });
  });

  it("a rollback names a previous revision by an unambiguous prefix; 6 characters are refused", async () => {
    const { call } = setup();
    const short = await call("POST", `${WEB}/operations`, TEAM_A, {
      type: "rollback",
      revision: SHA1.slice(0, 6),
    });
    expect(short.status).toBe(409);
    expect(((await short.json()) as { message: string }).message).toBe(
      'revision "111111" is not in status.previousRevisions (2222222, 1111111) (a prefix needs at least 7 hex characters)',
    );
    const res = await call("POST", `${WEB}/operations`, TEAM_A, {
      type: "rollback",
      revision: SHA1.slice(0, 9),
    });
    expect(res.status).toBe(202);
    expect(((await res.json()) as { operation: { revision: string } }).operation.revision).toBe(
      SHA1,
    );
  });

  it("409 for a rollback to a revision not in previousRevisions, or with none recorded", async () => {
    const { kube, call } = setup();
    const res = await call("POST", `${WEB}/operations`, TEAM_A, {
      type: "rollback",
      revision: HELD,
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      message: `revision "${HELD}" is not in status.previousRevisions (2222222, 1111111)`,
      previousRevisions: [SHA2, SHA1],
    });
    const none = await call("POST", "/api/v1/namespaces/team-a/apps/fresh/operations", TEAM_A, {
      type: "rollback",
    });
    expect(none.status).toBe(409);
    expect(await none.json()).toEqual({
      message: "nothing to roll back to: status.previousRevisions is empty",
    });
    expect(kube.calls.setOperation).toEqual([]);
  });

  it("409 with the reason on a frozen App", async () => {
    const { kube, call } = setup();
    const res = await call("POST", "/api/v1/namespaces/team-a/apps/frozen/operations", TEAM_A, {
      type: "sync",
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      message: "App is frozen: operations are refused while spec.freeze is true",
    });
    expect(kube.calls.setOperation).toEqual([]);
    expect(kube.calls.trigger).toEqual([]);
  });

  it("409 for a deny window that never closes: nextSyncWindow null, and a message saying so", async () => {
    const { call } = setup([
      testApp("team-a", "always-frozen", {
        status,
        spec: { syncWindows: [{ kind: "deny", schedule: "0 * * * *", duration: "2h" }] },
      }),
    ]);
    const res = await call(
      "POST",
      "/api/v1/namespaces/team-a/apps/always-frozen/operations",
      TEAM_A,
      {
        type: "sync",
      },
    );
    expect(res.status).toBe(409);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body["nextSyncWindow"]).toBeNull();
    // Hourly openings: the search stops at its 1,000th, 41 days ahead.
    expect(body["nextSyncWindowMessage"]).toBe(
      "no sync window opens within 41 days (searched until 2026-04-14T21:00:00.000Z)",
    );
  });

  it("409 naming the sync window that blocks a manual sync, with when it opens", async () => {
    // 05:06 UTC is inside a deny window from 22:00 for 8 h.
    const { kube, call } = setup(
      ["", "-manual"].map((suffix) =>
        testApp("team-a", `frozen-nights${suffix}`, {
          status,
          spec: {
            syncWindows: [
              { kind: "deny", schedule: "0 22 * * *", duration: "8h", manualSync: suffix !== "" },
            ],
          },
        }),
      ),
    );
    const nights = "/api/v1/namespaces/team-a/apps/frozen-nights";
    for (const type of ["sync", "deploy", "rollback"]) {
      const res = await call("POST", `${nights}/operations`, TEAM_A, { type });
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual({
        message:
          'manual sync is blocked by the open deny window spec.syncWindows[0] ("0 22 * * *" UTC, 8h); next allowed at 2026-03-04T06:00:00.000Z (manualSync: true on a window lets operations through)',
        nextSyncWindow: "2026-03-04T06:00:00.000Z",
      });
    }
    expect((await call("POST", `${nights}/approve`, TEAM_A)).status).toBe(409);
    expect(kube.calls.setOperation).toEqual([]);
    // A Restart is not a sync; with manualSync on the window a Sync goes through.
    expect((await call("POST", `${nights}/operations`, TEAM_A, { type: "restart" })).status).toBe(
      202,
    );
    const manual = await call("POST", `${nights}-manual/operations`, TEAM_A, { type: "sync" });
    expect(manual.status).toBe(202);
  });

  it("409 while an earlier operation is pending; allowed once its state is final", async () => {
    const { kube, call } = setup();
    expect((await call("POST", `${WEB}/operations`, TEAM_A, { type: "sync" })).status).toBe(202);
    const first = kube.calls.setOperation[0]?.operation as { id: string };
    const second = await call("POST", `${WEB}/operations`, TEAM_A, { type: "restart" });
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({
      message: `operation ${first.id} (Sync) is still pending`,
    });
    const approve = await call("POST", `${WEB}/approve`, TEAM_A, {});
    expect(approve.status).toBe(409);

    const stored = kube.app("team-a", "web")!;
    stored.status = {
      ...stored.status,
      operationState: { id: first.id, type: "Sync", phase: "Running" },
    };
    expect((await call("POST", `${WEB}/operations`, TEAM_A, { type: "restart" })).status).toBe(409);
    stored.status = {
      ...stored.status,
      operationState: { id: first.id, type: "Sync", phase: "Succeeded" },
    };
    expect((await call("POST", `${WEB}/operations`, TEAM_A, { type: "restart" })).status).toBe(202);
    expect(kube.calls.setOperation).toHaveLength(2);
  });

  it("400 with issues for a bad shape, a missing body or malformed JSON", async () => {
    const { kube, call } = setup();
    const unknown = await call("POST", `${WEB}/operations`, TEAM_A, { type: "explode" });
    expect(unknown.status).toBe(400);
    const j = (await unknown.json()) as {
      message: string;
      issues: Array<{ path: string; message: string }>;
    };
    expect(j.message).toBe("invalid request body");
    expect(j.issues.map((i) => i.path)).toEqual(["body.type"]);

    const extra = await call("POST", `${WEB}/operations`, TEAM_A, { type: "sync", revision: SHA1 });
    expect(extra.status).toBe(400);
    expect(await extra.json()).toEqual({
      message: "invalid request body",
      issues: [
        {
          code: "InvalidRequest",
          path: "body.revision",
          message: "revision is only accepted for rollback",
        },
      ],
    });

    const empty = await call("POST", `${WEB}/operations`, TEAM_A);
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ message: "request body required" });

    const malformed = await call("POST", `${WEB}/operations`, TEAM_A, '{"type": sync}');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ message: "malformed JSON body" });
    expect(kube.calls.setOperation).toEqual([]);
  });

  it("404 for an unknown App", async () => {
    const { call } = setup();
    const res = await call("POST", "/api/v1/namespaces/team-a/apps/ghost/operations", TEAM_A, {
      type: "sync",
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: "App team-a/ghost not found" });
  });

  it("413 for a body over 1 MiB", async () => {
    const { kube, call } = setup();
    const res = await call("POST", `${WEB}/operations`, TEAM_A, {
      type: "sync",
      pad: "x".repeat(1024 * 1024),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ message: "request body exceeds 1048576 bytes (1 MiB)" });
    expect(kube.calls.setOperation).toEqual([]);
  });
});

describe("Kubernetes API errors", () => {
  it("409 from the API server (conflict) stays 409", async () => {
    const { kube, call } = setup();
    kube.fail.setOperation = new KubeApiError(409, "Conflict", "the object has been modified");
    const res = await call("POST", `${WEB}/operations`, TEAM_A, { type: "sync" });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      message: "the object has been modified",
      reason: "Conflict",
    });
    expect(kube.calls.trigger).toEqual([]);
  });

  it("404 stays 404; others become 502 without details of the request", async () => {
    const { kube, call, log } = setup();
    kube.fail.getApp = new KubeApiError(404, "NotFound", 'apps.plumb.dev "web" not found');
    expect((await call("GET", WEB, TEAM_A)).status).toBe(404);
    kube.fail.getApp = new KubeApiError(500, "InternalError", "etcdserver: request timed out");
    const res = await call("GET", WEB, TEAM_A);
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({
      message: "kubernetes API error",
      status: 500,
      reason: "InternalError",
    });
    expect(log).toEqual([
      {
        msg: "kubernetes API error",
        status: 500,
        reason: "InternalError",
        detail: "etcdserver: request timed out",
        method: "GET",
        path: WEB,
      },
    ]);
  });

  it("a request that got no answer says why, in the answer and the log", async () => {
    const { kube, call, log } = setup();
    const message =
      "kubernetes API unreachable: GET /apis/plumb.dev/v1alpha1/namespaces/team-a/apps/web: TLS or connection failure inside workerd (reference 8ptee): most likely the server's certificate is not publicly trusted (\"invalid peer certificate: UnknownIssuer\" in workerd's log)";
    kube.fail.getApp = new KubeApiError(503, "ServiceUnavailable", message);
    const res = await call("GET", WEB, TEAM_A);
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({
      message: "kubernetes API error",
      status: 503,
      reason: "ServiceUnavailable",
      detail: message,
    });
    expect(log.at(-1)).toMatchObject({ detail: message });
  });

  it("a failing Event or trigger does not undo the recorded operation", async () => {
    const kube = new FakeKube([testApp("team-a", "web", { status })]);
    kube.fail.emitEvent = new KubeApiError(403, "Forbidden", "events is forbidden");
    const log: Array<Record<string, unknown>> = [];
    const app = createHttpApp({
      apps: kube,
      config: CONFIG,
      trigger: () => Promise.reject(new Error("queue unavailable")),
      now: () => new Date(NOW),
      log: (e) => log.push(e),
    });
    const res = await app.request(`${WEB}/operations`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEAM_A}` },
      body: '{"type":"sync"}',
    });
    expect(res.status).toBe(202);
    expect(kube.calls.setOperation).toHaveLength(1);
    expect(log.map((e) => e["msg"])).toEqual(["emitting event failed", "trigger failed"]);
  });
});

describe("a known route asked with another method", () => {
  it("is 405 with Allow, after authentication", async () => {
    const { call } = setup();
    const res = await call("GET", `${WEB}/operations`, TEAM_A);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(await res.json()).toEqual({
      message: `GET is not allowed on ${WEB}/operations; use POST`,
    });
    expect((await call("DELETE", WEB, TEAM_A)).headers.get("allow")).toBe("GET, HEAD");
    expect((await call("GET", `${WEB}/operations`)).status).toBe(401);
    expect((await call("GET", "/webhooks/github")).status).toBe(405);
    expect((await call("GET", `${WEB}/nothing-here`, TEAM_A)).status).toBe(404);
  });
});
