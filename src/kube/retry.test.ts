import { describe, expect, it } from "vitest";
import { isIdempotent, type RetryEvent, retryAfterMs, withRetries } from "./retry.ts";
import {
  type KubeRequest,
  type KubeResponse,
  type KubeTransport,
  KubeTransportError,
  type TransportFailure,
} from "./transport.ts";

type Step = KubeResponse | { fail: TransportFailure; sent: boolean };

/** A transport answering from `steps` in order, on a fake clock that sleeps advance. */
function scripted(steps: Step[], attemptMs = 10, oversleepMs = 0) {
  let clock = 0;
  const sent: Array<{ method: string; path: string; request: KubeRequest }> = [];
  const waits: number[] = [];
  const events: RetryEvent[] = [];
  const inner: KubeTransport = async (method, path, request = {}) => {
    sent.push({ method, path, request });
    const step = steps.shift();
    if (!step) throw new Error("script exhausted");
    if ("fail" in step) {
      clock += step.fail === "timeout" ? (request.timeoutMs ?? 0) : attemptMs;
      const cause =
        step.fail === "timeout" ? "no answer (timeout)" : "connection reset (ECONNRESET)";
      throw new KubeTransportError(method, path, step.fail, cause, { sent: step.sent });
    }
    clock += attemptMs;
    return step;
  };
  const transport = withRetries(inner, {
    now: () => clock,
    sleep: async (ms) => {
      waits.push(ms);
      clock += ms + oversleepMs;
    },
    onRetry: (e) => events.push(e),
  });
  return { transport, sent, waits, events, elapsed: () => clock };
}

const ok: KubeResponse = { status: 200, body: { kind: "App" } };
const status = (code: number, retryAfter?: string, message = "x"): KubeResponse => ({
  status: code,
  body: { kind: "Status", code, message },
  headers: retryAfter === undefined ? {} : { "retry-after": retryAfter },
});
const APPLY = { body: {}, contentType: "application/apply-patch+yaml" };

describe("withRetries", () => {
  it("waits the server's Retry-After after a 429 and returns the next answer", async () => {
    const s = scripted([status(429, "2", "storage is (re)initializing"), ok]);
    const res = await s.transport("GET", "/apis/plumb.dev/v1alpha1/apps");
    expect(res).toEqual({ ...ok, attempts: 2 });
    expect(s.waits).toEqual([2000]);
    expect(s.events).toEqual([
      {
        request: "GET /apis/plumb.dev/v1alpha1/apps",
        attempt: 1,
        cause: "HTTP 429 (Retry-After 2): storage is (re)initializing",
        waitMs: 2000,
      },
    ]);
  });

  it("sends a create again after 429 or 503 with Retry-After: the server did not run it", async () => {
    const s = scripted([status(429, "1"), status(503, "1"), { status: 201, body: {} }]);
    const res = await s.transport("POST", "/api/v1/namespaces/a/events", { body: {} });
    expect(res.status).toBe(201);
    expect(s.sent).toHaveLength(3);
  });

  it("never sends a create again after an answer or a reset that may mean it ran", async () => {
    for (const step of [
      status(500),
      status(503),
      status(504, "1"),
      { fail: "reset", sent: true } as const,
      { fail: "timeout", sent: true } as const,
    ]) {
      const s = scripted([step, ok]);
      const out = await s.transport("POST", "/api/v1/namespaces/a/events", { body: {} }).then(
        (r) => r.status,
        (e: KubeTransportError) => e.kind,
      );
      expect(out).toBe("status" in step ? step.status : step.fail);
      expect(s.sent).toHaveLength(1);
    }
  });

  it("sends a create again after a lost answer when the caller says it handles a repeat", async () => {
    const s = scripted([{ fail: "reset", sent: true }, status(409)]);
    const res = await s.transport("POST", "/apis/coordination.k8s.io/v1/namespaces/a/leases", {
      body: {},
      idempotent: true,
    });
    expect(res).toMatchObject({ status: 409, attempts: 2 });
  });

  it("sends a create again when the connection failed before anything was sent", async () => {
    const s = scripted([
      { fail: "connect", sent: false },
      { status: 201, body: {} },
    ]);
    expect((await s.transport("POST", "/api/v1/namespaces/a/events", { body: {} })).status).toBe(
      201,
    );
    expect(s.waits).toEqual([250]);
  });

  it("retries reads and idempotent writes on 5xx and resets with exponential backoff", async () => {
    const s = scripted([
      status(500),
      { fail: "reset", sent: true },
      status(502),
      { fail: "timeout", sent: true },
      ok,
    ]);
    expect((await s.transport("PATCH", "/api/v1/namespaces/a/configmaps/c", APPLY)).status).toBe(
      200,
    );
    expect(s.waits).toEqual([250, 500, 1000, 2000]);
    for (const [method, request] of [
      ["GET", {}],
      ["PUT", { body: {} }],
      ["DELETE", { body: {} }],
      ["PATCH", { body: {}, contentType: "application/merge-patch+json" }],
    ] as const) {
      const r = scripted([status(500), ok]);
      expect((await r.transport(method, "/x", request)).status).toBe(200);
    }
  });

  it("never retries other 4xx, certificate failures or unreadable credentials", async () => {
    for (const code of [400, 401, 403, 404, 409, 410, 422]) {
      const s = scripted([status(code), ok]);
      expect((await s.transport("GET", "/x")).status).toBe(code);
      expect(s.sent).toHaveLength(1);
    }
    for (const fail of ["tls", "config"] as const) {
      const s = scripted([{ fail, sent: false }, ok]);
      await expect(s.transport("GET", "/x")).rejects.toMatchObject({ kind: fail });
      expect(s.sent).toHaveLength(1);
    }
  });

  it("never retries a 500 that refuses the body itself (it does not fit the kind's schema)", async () => {
    // kube-apiserver v1.35's answers to an apply of `bogusTop: 1` in a ConfigMap and of bad
    // base64 in a Secret's data: no Status reason, the same answer every time.
    for (const message of [
      "failed to create typed patch object (/a; /v1, Kind=ConfigMap): .bogusTop: field not declared in schema",
      "failed to convert new object (/b; /v1, Kind=Secret) to proper version: unable to convert unstructured object to /v1, Kind=Secret: error decoding from json: illegal base64 data at input byte 4",
    ]) {
      const s = scripted([status(500, undefined, message), ok]);
      expect((await s.transport("PATCH", "/x", APPLY)).status).toBe(500);
      expect(s.sent).toHaveLength(1);
    }
    // The server's own 500s carry a reason (InternalError) and are retried.
    const internal: KubeResponse = {
      status: 500,
      body: {
        kind: "Status",
        code: 500,
        reason: "InternalError",
        message: "failed to create typed patch object: etcdserver: request timed out",
      },
    };
    const s = scripted([internal, ok]);
    expect((await s.transport("PATCH", "/x", APPLY)).status).toBe(200);
    expect(s.sent).toHaveLength(2);
  });

  it("does not retry a JSON Patch or strategic merge patch after a 500", async () => {
    for (const contentType of [
      "application/json-patch+json",
      "application/strategic-merge-patch+json",
    ]) {
      const s = scripted([status(500), ok]);
      expect((await s.transport("PATCH", "/x", { body: [], contentType })).status).toBe(500);
    }
  });

  it("stops after 10 retries (client-go) and says how many attempts it made", async () => {
    const s = scripted(Array.from({ length: 12 }, () => status(429, "0")));
    const res = await s.transport("GET", "/x");
    expect(res).toMatchObject({ status: 429, attempts: 11 });
    expect(s.sent).toHaveLength(11);
  });

  it("caps Retry-After at 10 s and gives up when the wait would pass the 30 s deadline", async () => {
    const s = scripted([status(503, "3600"), status(503, "3600"), status(503, "3600"), ok]);
    const res = await s.transport("GET", "/x");
    expect(s.waits).toEqual([10_000, 10_000]);
    expect(res).toMatchObject({ status: 503, attempts: 3 });
  });

  it("gives every attempt the time left before the deadline, at most 15 s", async () => {
    const s = scripted([
      { fail: "timeout", sent: true },
      { fail: "timeout", sent: true },
      { fail: "timeout", sent: true },
    ]);
    const err = await s.transport("GET", "/api/v1/namespaces/a/secrets/b").catch((e) => e);
    expect(s.sent.map((x) => x.request.timeoutMs)).toEqual([15_000, 14_750]);
    expect(err).toBeInstanceOf(KubeTransportError);
    expect(err.message).toBe(
      "GET /api/v1/namespaces/a/secrets/b: no answer (timeout) (2 attempts in 30.0 s)",
    );
    expect(s.elapsed()).toBe(30_000);
  });

  it("sends no retry that would have less than 1 s before the deadline", async () => {
    // The first attempt's answer took 29.5 s (a loaded API server): 250 ms of backoff would
    // leave 250 ms, too little for an answer, so the 503 stands.
    const s = scripted([status(503), ok], 29_500);
    expect(await s.transport("GET", "/x")).toMatchObject({ status: 503 });
    expect(s.sent).toHaveLength(1);
    expect(s.waits).toEqual([]);
  });

  it("keeps the last outcome when the wait overran the deadline (timers firing late)", async () => {
    // Each 250 ms backoff sleeps 14.9 s longer: after the first timeout (15 s) the sleep ends at
    // 30.15 s, past the deadline; no attempt of 1 ms is sent and the timeout is what is thrown.
    const s = scripted([{ fail: "timeout", sent: true }, ok], 10, 14_900);
    const err = await s.transport("GET", "/api/v1/namespaces/a/secrets/b").catch((e) => e);
    expect(s.sent.map((x) => x.request.timeoutMs)).toEqual([15_000]);
    expect(err).toBeInstanceOf(KubeTransportError);
    expect(err.message).toBe("GET /api/v1/namespaces/a/secrets/b: no answer (timeout)");
    // Two answers then an overrun: the second answer stands, with its attempt count.
    const t = scripted([status(429, "0"), status(429, "0"), ok], 10, 14_500);
    expect(await t.transport("GET", "/x")).toMatchObject({ status: 429, attempts: 2 });
    expect(t.sent).toHaveLength(2);
  });

  it("passes the request through unchanged apart from the timeout", async () => {
    const s = scripted([ok]);
    const request = { query: { labelSelector: "a=b" }, accept: "application/json;as=Table" };
    expect(await s.transport("GET", "/x", request)).toEqual(ok);
    expect(s.sent[0]!.request).toEqual({ ...request, timeoutMs: 15_000 });
  });
});

describe("isIdempotent", () => {
  it("says which requests may be sent twice", () => {
    expect(isIdempotent("GET", undefined)).toBe(true);
    expect(isIdempotent("PUT", "application/json")).toBe(true);
    expect(isIdempotent("DELETE", "application/json")).toBe(true);
    expect(isIdempotent("PATCH", "application/apply-patch+yaml")).toBe(true);
    expect(isIdempotent("PATCH", "application/merge-patch+json")).toBe(true);
    expect(isIdempotent("PATCH", "application/json-patch+json")).toBe(false);
    expect(isIdempotent("PATCH", "application/strategic-merge-patch+json")).toBe(false);
    expect(isIdempotent("POST", "application/json")).toBe(false);
  });
});

describe("retryAfterMs", () => {
  it("reads delay-seconds and HTTP dates, and nothing else", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs("3", now)).toBe(3000);
    expect(retryAfterMs(" 0 ", now)).toBe(0);
    expect(retryAfterMs("Thu, 01 Jan 2026 00:00:05 GMT", now)).toBe(5000);
    expect(retryAfterMs("Wed, 31 Dec 2025 23:59:00 GMT", now)).toBe(0);
    expect(retryAfterMs("soon", now)).toBeUndefined();
    expect(retryAfterMs("-1", now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });

  it("sends nothing more once the caller's signal is aborted (a run whose Lease ran out)", async () => {
    const lost = new Error("the lease was lost");
    const controller = new AbortController();
    const sent: string[] = [];
    const transport = withRetries(
      async (method, path) => {
        sent.push(`${method} ${path}`);
        controller.abort(lost); // the Lease runs out while the apply hangs
        throw new KubeTransportError(method, path, "timeout", "no answer (timeout)", {
          sent: true,
        });
      },
      { now: () => 0, sleep: async () => {} },
    );
    await expect(
      transport("PATCH", "/api/v1/namespaces/a/configmaps/b", {
        ...APPLY,
        signal: controller.signal,
      }),
    ).rejects.toBe(lost);
    expect(sent).toEqual(["PATCH /api/v1/namespaces/a/configmaps/b"]);
  });

  it("an aborted signal is thrown before any attempt", async () => {
    const s = scripted([ok]);
    const controller = new AbortController();
    controller.abort(new Error("gone"));
    await expect(
      s.transport("DELETE", "/api/v1/namespaces/a/configmaps/b", { signal: controller.signal }),
    ).rejects.toThrow("gone");
    expect(s.sent).toEqual([]);
  });
});
