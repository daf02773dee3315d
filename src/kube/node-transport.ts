// Node's transport: node:https (or node:http) with one kept-alive agent carrying the cluster's
// CA and the client certificate, bearer or basic credentials per request. A kubeconfig that
// needs an exec plugin, an auth provider or a proxy is handed to @kubernetes/client-node,
// loaded only then (it costs ~0.5 s of CPU and 80 MiB to load).
import { readFileSync } from "node:fs";
import type { Agent as HttpAgent, IncomingMessage } from "node:http";
import type { RequestOptions } from "node:https";
import { basicAuth } from "../core/index.ts";
import { describeCause } from "./causes.ts";
import { KubeconfigError, type Pem } from "./kubeconfig.ts";
import { type NodeKubeconfig, tokenSource } from "./node-kubeconfig.ts";
import {
  type KubeTransport,
  KubeTransportError,
  parseBody,
  type TransportFailure,
  withQuery,
} from "./transport.ts";

const USER_AGENT = "plumb";

// The CommonJS objects, not ESM imports: an ESM import of node:http builds its namespace from
// every export, and one of them loads undici (~30 ms and 15 MiB at start-up).
const http = process.getBuiltinModule("node:http");
const https = process.getBuiltinModule("node:https");

/** What one request is sent with: the connection pool and the credential headers. */
interface Prepared {
  agent: HttpAgent;
  headers: Record<string, string>;
}

export interface NodeTransportOptions {
  /** File reader for certificates, keys and the token file (tests). */
  readFile?: (path: string) => string;
  /** Clock for the token file's age (tests). */
  now?: () => number;
}

/**
 * A KubeTransport for a loaded kubeconfig. Certificate files are read now (a missing one fails
 * here, at start-up); the token file as client-go reads it (see tokenSource). Connections are
 * kept alive and reused; an idle one does not keep the process running.
 * @throws KubeconfigError when a certificate or key file cannot be read
 */
export function createNodeTransport(
  kc: NodeKubeconfig,
  options: NodeTransportOptions = {},
): KubeTransport {
  const read = options.readFile ?? ((p: string) => readFileSync(p, "utf8"));
  const { access } = kc;
  const plain = access.server.startsWith("http:");
  let prepare: () => Promise<Prepared>;
  let unauthorized: (sentAt: number) => void = () => {};
  if (access.delegate) {
    prepare = clientNodePreparer(kc);
  } else {
    const pem = (p: Pem | undefined, what: string): string | undefined => {
      if (!p) return undefined;
      if ("data" in p) return p.data;
      try {
        return read(p.file);
      } catch (err) {
        const code = (err as { code?: string }).code;
        throw new KubeconfigError(
          `kubeconfig ${kc.source}: cannot read the ${what} ${p.file} (${code ?? String(err)})`,
        );
      }
    };
    const tls = access.tls;
    const ca = pem(tls.ca, "certificate-authority");
    const cert = pem(tls.cert, "client-certificate");
    const key = pem(tls.key, "client-key");
    const agent = plain
      ? new http.Agent({ keepAlive: true })
      : new https.Agent({
          keepAlive: true,
          ...(ca ? { ca } : {}),
          ...(cert ? { cert } : {}),
          ...(key ? { key } : {}),
          ...(tls.serverName ? { servername: tls.serverName } : {}),
          rejectUnauthorized: !tls.insecureSkipVerify,
        });
    const auth = access.auth;
    if (auth.kind === "token") {
      const tokens = tokenSource(auth, read, options.now);
      prepare = async () => ({ agent, headers: { Authorization: `Bearer ${tokens.token()}` } });
      unauthorized = (sentAt) => tokens.reset(sentAt);
    } else if (auth.kind === "basic") {
      const headers = { Authorization: basicAuth(auth.username, auth.password) };
      prepare = async () => ({ agent, headers });
    } else {
      prepare = async () => ({ agent, headers: {} });
    }
  }
  const send = plain ? http.request : https.request;

  return async (method, path, request = {}) => {
    let prepared: Prepared;
    try {
      prepared = await prepare();
    } catch (err) {
      const cause = err instanceof Error ? err.message : String(err);
      throw new KubeTransportError(method, path, "config", cause, { sent: false });
    }
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const headers: Record<string, string> = {
      ...prepared.headers,
      Accept: request.accept ?? "application/json",
      "User-Agent": USER_AGENT,
    };
    if (body !== undefined) {
      headers["Content-Type"] = request.contentType ?? "application/json";
      headers["Content-Length"] = String(Buffer.byteLength(body));
    }
    const url = `${access.server}${withQuery(path, request.query)}`;
    const sentAt = (options.now ?? Date.now)();
    return new Promise((resolve, reject) => {
      let connected = false;
      let written = false;
      let timedOut = false;
      let settled = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const fail = (err: unknown, phase?: TransportFailure) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (request.signal?.aborted) {
          reject(request.signal.reason);
          return;
        }
        const sent = connected && written;
        if (timedOut) {
          const text = `no answer within ${request.timeoutMs} ms (timeout)`;
          reject(new KubeTransportError(method, path, "timeout", text, { sent }));
          return;
        }
        const cause = describeCause(err, sent);
        reject(
          new KubeTransportError(method, path, phase ?? cause.kind, cause.text, {
            code: cause.code,
            sent: cause.sent,
          }),
        );
      };
      const opts: RequestOptions = { method, headers, agent: prepared.agent };
      const req = send(url, opts, (res: IncomingMessage) => {
        // Decoded as it comes (a multi-byte character split across chunks is joined by the
        // decoder): no Buffer of the whole body is made, only the string JSON.parse reads. A
        // large list's body in one Buffer costs its size again outside the V8 heap, in
        // memory the C allocator does not give back at once.
        res.setEncoding("utf8");
        const chunks: string[] = [];
        res.on("data", (c: string) => chunks.push(c));
        res.on("error", (err) => fail(err, "reset"));
        res.on("close", () => {
          // The connection ended before the whole body came.
          if (!res.complete)
            fail(Object.assign(new Error("aborted"), { code: "ECONNRESET" }), "reset");
        });
        res.on("end", () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          const status = res.statusCode ?? 0;
          if (status === 401) unauthorized(sentAt);
          const out: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) {
            if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
          }
          resolve({
            status,
            body: parseBody(chunks.length === 1 ? chunks[0]! : chunks.join("")),
            headers: out,
          });
        });
      });
      req.on("socket", (socket) => {
        if (!socket.connecting)
          connected = true; // a kept-alive connection
        else socket.once(plain ? "connect" : "secureConnect", () => (connected = true));
      });
      req.on("finish", () => (written = true));
      req.on("error", (err) => fail(err));
      request.signal?.addEventListener("abort", () => req.destroy(new Error("aborted")), {
        once: true,
      });
      if (request.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          timedOut = true;
          req.destroy(new Error("timeout"));
        }, request.timeoutMs);
      }
      req.end(body);
    });
  };
}

/**
 * Credentials from @kubernetes/client-node for what plumb does not implement (exec plugins,
 * auth providers, proxies), loaded on the first request. client-node reads the same files and
 * context; plumb still builds and sends the requests.
 */
function clientNodePreparer(kc: NodeKubeconfig): () => Promise<Prepared> {
  let loaded: Promise<import("@kubernetes/client-node").KubeConfig> | undefined;
  const load = async () => {
    const { KubeConfig } = await import("@kubernetes/client-node");
    const config = new KubeConfig();
    const [first, ...rest] = kc.files;
    if (first === undefined) config.loadFromCluster();
    else config.loadFromFile(first);
    for (const f of rest) {
      const more = new KubeConfig();
      more.loadFromFile(f);
      config.mergeConfig(more, true);
    }
    config.setCurrentContext(kc.access.context);
    return config;
  };
  return async () => {
    loaded ??= load();
    const config = await loaded;
    const opts: RequestOptions = {};
    await config.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      if (v !== undefined) headers[k] = String(v);
    }
    if (opts.auth) {
      const i = opts.auth.indexOf(":");
      headers["Authorization"] = basicAuth(opts.auth.slice(0, i), opts.auth.slice(i + 1));
    }
    const agent =
      opts.agent instanceof http.Agent ? opts.agent : new https.Agent({ keepAlive: true });
    return { agent, headers };
  };
}
