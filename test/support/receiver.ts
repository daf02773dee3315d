// A real local HTTP receiver standing in for Slack and the other notification targets (webhooks,
// a forge's commit-status API): records every request it gets.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /** The body as received, byte for byte (UTF-8): what a signature is over. */
  raw: string;
}

export interface Receiver {
  url: string;
  /** Requests answered with a 2xx (what Slack would show). */
  received: Received[];
  /** Requests answered with an error status (an outage). */
  refused: Received[];
  /** Answers every following request with `status` (e.g. 500 for an outage, 200 again after). */
  setStatus(status: number): void;
  stop(): Promise<void>;
}

/** An answer of its own for a request (a forge's JSON), or undefined for the default "ok". */
export type Responder = (request: Received) => { status: number; json: unknown } | undefined;

/**
 * Starts a receiver on 127.0.0.1 answering `status` (200) with "ok", as Slack does; `respond`
 * may answer a request with JSON instead (a forge's API listing comments).
 */
export async function startReceiver(initial = 200, respond?: Responder): Promise<Receiver> {
  const received: Received[] = [];
  const refused: Received[] = [];
  let status = initial;
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep text
      }
      const got = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body,
        raw: text,
      };
      const own = respond?.(got);
      if (own) {
        (own.status < 300 ? received : refused).push(got);
        res.writeHead(own.status, { "content-type": "application/json" });
        res.end(JSON.stringify(own.json));
        return;
      }
      (status < 300 ? received : refused).push(got);
      res.writeHead(status, { "content-type": "text/plain" });
      res.end(status < 300 ? "ok" : "internal_error");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    refused,
    setStatus(next) {
      status = next;
    },
    stop: () => new Promise((r) => server.close(() => r())),
  };
}
