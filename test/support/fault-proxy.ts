// A fault-injecting proxy between plumb and the real API server, for tests and soak scripts.
// It listens on plain HTTP on 127.0.0.1 (workerd's fetch cannot
// trust the cluster's private CA, so the Worker talks through it too), forwards to the API
// server over TLS with the client's own Authorization, records every request, and applies
// the faults scripted with inject(): an error status (429/503 with Retry-After, 500, 409…),
// a reset before forwarding, a reset AFTER forwarding (the API server executed the request,
// the client never hears back), a slow answer, no answer at all, or a request held and
// forwarded late (after its client gave up).
//
//   const proxy = await startFaultProxy({ server, caFile });
//   const busy = proxy.inject({ method: "GET", path: /\/apps$/, fault: { status: 429, retryAfter: 1,
//     message: "storage is (re)initializing" } });
//   … run plumb with proxy.writeKubeconfig(dir, token) …
//   expect(busy.hits()).toBe(1); expect(proxy.requests.filter(…))…
//   await proxy.stop();
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Agent, request as httpsRequest } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";

/** What to do to a matched request. */
export type Fault =
  /** Answer this status without forwarding: a Kubernetes Status body, Retry-After when given. */
  | { status: number; retryAfter?: number | string; reason?: string; message?: string }
  /** Close the client's connection without forwarding (the API server never sees it). */
  | { reset: "before" }
  /** Forward, wait for the API server's whole answer, then close the client's connection. */
  | { reset: "after" }
  /** Forward, then hold the API server's answer for `delayMs` before passing it on. */
  | { delayMs: number }
  /** Never answer (the request is not forwarded); held until the client gives up or stop(). */
  | { hang: true }
  /**
   * Hold the request until `holdUntil` settles, then forward it whether or not the client is
   * still waiting: a write that lands long after its sender gave up (a slow link). The
   * request's record gets the API server's status once it answered.
   */
  | { holdUntil: Promise<unknown> };

/** Which requests a fault applies to, and how often. */
export interface FaultRule {
  /** HTTP method, case-insensitive; any when absent. */
  method?: string;
  /**
   * A string matches when the request's path (with its query) contains it; a RegExp is tested
   * against the path with its query. Any path when absent.
   */
  path?: string | RegExp;
  /** Matching requests to let through untouched first (default 0). */
  skip?: number;
  /** Faults to inject, then the rule is spent (default 1; Infinity for every match). */
  times?: number;
  /** Chance (0–1) that a matching request gets the fault, from the proxy's seeded RNG (default 1). */
  rate?: number;
  fault: Fault;
}

/** A rule added with inject(). */
export interface FaultHandle {
  /** Requests this rule has faulted so far. */
  hits(): number;
  /** Stops applying the rule. */
  remove(): void;
}

/** One request the proxy saw, in arrival order. */
export interface ProxiedRequest {
  method: string;
  /** Path with its query, as sent. */
  path: string;
  contentType: string | undefined;
  /** The fault applied ("status", "reset-before", "reset-after", "delay", "hang", "hold"), if any. */
  fault: string | undefined;
  /** Status the client received; undefined when it received none (reset, hang). */
  status: number | undefined;
  /** ms since the proxy started, at arrival. */
  at: number;
}

export interface FaultProxy {
  /** http://127.0.0.1:<port>, the API server's stand-in. */
  url: string;
  /** Every request so far. */
  requests: ProxiedRequest[];
  /** Adds a rule; rules are tried in the order added, the first that applies wins. */
  inject(rule: FaultRule): FaultHandle;
  /** Removes every rule. */
  clear(): void;
  /**
   * Writes `dir`/kubeconfig-proxy: server = this proxy (plain HTTP), bearer `token`.
   * @returns its path
   */
  writeKubeconfig(dir: string, token: string): string;
  /** Closes the proxy, answering nothing more (hanging requests are cut). */
  stop(): Promise<void>;
}

export interface FaultProxyOptions {
  /** The API server's https URL. */
  server: string;
  /** PEM file of the CA that signed the API server's certificate. */
  caFile: string;
  /** Seed of the RNG behind `rate` (default 1): the same seed gives the same faults. */
  seed?: number;
}

/** Starts the proxy on a free port of 127.0.0.1. */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(options.server);
  const agent = new Agent({ keepAlive: true, ca: readFileSync(options.caFile) });
  const started = Date.now();
  const requests: ProxiedRequest[] = [];
  const rules: Array<FaultRule & { seen: number; hit: number; removed: boolean }> = [];
  const sockets = new Set<Socket>();
  const random = mulberry32(options.seed ?? 1);
  let stopped = false;

  const pick = (method: string, path: string) => {
    for (const r of rules) {
      if (r.removed || r.hit >= (r.times ?? 1)) continue;
      if (r.method && r.method.toUpperCase() !== method) continue;
      if (r.path !== undefined) {
        const ok = typeof r.path === "string" ? path.includes(r.path) : r.path.test(path);
        if (!ok) continue;
      }
      r.seen += 1;
      if (r.seen <= (r.skip ?? 0)) continue;
      if (r.rate !== undefined && random() >= r.rate) continue;
      r.hit += 1;
      return r.fault;
    }
    return undefined;
  };

  /** Sends the request on to the API server; resolves with its whole answer. */
  const forward = (req: IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: Record<string, string | string[]>; body: Buffer }>(
      (resolve, reject) => {
        const headers = { ...req.headers, host: target.host };
        const up = httpsRequest(
          {
            hostname: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers,
            agent,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () =>
              resolve({
                status: res.statusCode ?? 502,
                headers: res.headers as Record<string, string | string[]>,
                body: Buffer.concat(chunks),
              }),
            );
            res.on("error", reject);
          },
        );
        up.on("error", reject);
        up.end(body);
      },
    );

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const method = req.method ?? "GET";
    const path = req.url ?? "/";
    const fault = pick(method, path);
    const record: ProxiedRequest = {
      method,
      path,
      contentType: req.headers["content-type"],
      fault: fault && faultName(fault),
      status: undefined,
      at: Date.now() - started,
    };
    requests.push(record);
    if (fault && "status" in fault) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (fault.retryAfter !== undefined) headers["retry-after"] = String(fault.retryAfter);
      res.writeHead(fault.status, headers);
      res.end(
        JSON.stringify({
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          reason: fault.reason ?? defaultReason(fault.status),
          message: fault.message ?? `injected fault: HTTP ${fault.status}`,
          code: fault.status,
        }),
      );
      record.status = fault.status;
      return;
    }
    if (fault && "hang" in fault) return;
    if (fault && "holdUntil" in fault) {
      await fault.holdUntil.catch(() => undefined);
      if (stopped) return;
    }
    if (fault && "reset" in fault && fault.reset === "before") {
      req.socket.destroy();
      return;
    }
    let answer: Awaited<ReturnType<typeof forward>>;
    try {
      answer = await forward(req, body);
    } catch (err) {
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(`fault proxy: upstream failed: ${String(err)}`);
      record.status = 502;
      return;
    }
    if (fault && "reset" in fault) {
      req.socket.destroy();
      return;
    }
    if (fault && "delayMs" in fault) await new Promise((r) => setTimeout(r, fault.delayMs));
    if (res.destroyed) {
      record.status = answer.status;
      return;
    }
    const headers = { ...answer.headers };
    delete headers["transfer-encoding"];
    delete headers["connection"];
    headers["content-length"] = String(answer.body.length);
    res.writeHead(answer.status, headers);
    res.end(answer.body);
    record.status = answer.status;
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    inject(rule) {
      const r = { ...rule, seen: 0, hit: 0, removed: false };
      rules.push(r);
      return {
        hits: () => r.hit,
        remove: () => {
          r.removed = true;
        },
      };
    },
    clear() {
      rules.length = 0;
    },
    writeKubeconfig(dir, token) {
      const file = join(dir, "kubeconfig-proxy");
      writeFileSync(
        file,
        JSON.stringify({
          apiVersion: "v1",
          kind: "Config",
          clusters: [{ name: "proxy", cluster: { server: url } }],
          users: [{ name: "proxy", user: { token } }],
          contexts: [{ name: "proxy", context: { cluster: "proxy", user: "proxy" } }],
          "current-context": "proxy",
        }),
      );
      return file;
    },
    async stop() {
      stopped = true;
      for (const s of sockets) s.destroy();
      agent.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function faultName(f: Fault): string {
  if ("status" in f) return "status";
  if ("reset" in f) return `reset-${f.reset}`;
  if ("delayMs" in f) return "delay";
  if ("holdUntil" in f) return "hold";
  return "hang";
}

function defaultReason(status: number): string {
  const reasons: Record<number, string> = {
    409: "Conflict",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
  };
  return reasons[status] ?? "Unknown";
}

/** A small seeded PRNG (mulberry32): the same seed, the same sequence of faults. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
