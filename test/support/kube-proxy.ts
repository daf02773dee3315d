// A plain-HTTP front for the local API server (like `kubectl proxy`, but passing the client's
// own Authorization through): workerd's fetch will not trust the cluster's private CA.
// Records requests and can fail chosen ones, to test retries.
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";

export interface KubeProxy {
  url: string;
  /** "METHOD path" of every request seen. */
  requests: string[];
  /** The next `count` requests whose path contains `match` get HTTP `status`. */
  failNext(match: string, count: number, status?: number): void;
  stop(): Promise<void>;
}

/** Starts the proxy on 127.0.0.1 for `server` (https URL) trusting `caFile`. */
export async function startKubeProxy(server: string, caFile: string): Promise<KubeProxy> {
  const ca = readFileSync(caFile);
  const target = new URL(server);
  const requests: string[] = [];
  const faults: Array<{ match: string; left: number; status: number }> = [];
  const http = createServer((req: IncomingMessage, res) => {
    const line = `${req.method} ${req.url}`;
    requests.push(line);
    const fault = faults.find((f) => f.left > 0 && (req.url ?? "").includes(f.match));
    if (fault) {
      fault.left -= 1;
      res.writeHead(fault.status, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          kind: "Status",
          status: "Failure",
          reason: "ServiceUnavailable",
          message: "injected fault",
          code: fault.status,
        }),
      );
      return;
    }
    const headers = { ...req.headers, host: target.host };
    const upstream = httpsRequest(
      {
        hostname: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers,
        ca,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", (err) => {
      res.writeHead(502);
      res.end(String(err));
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext(match, count, status = 503) {
      faults.push({ match, left: count, status });
    },
    stop: () => new Promise((r) => http.close(() => r())),
  };
}
