// A real local HTTP receiver standing in for Slack: records every request it gets.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

export interface Receiver {
  url: string;
  received: Received[];
  stop(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 answering `status` (200) with "ok", as Slack does. */
export async function startReceiver(status = 200): Promise<Receiver> {
  const received: Received[] = [];
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
      received.push({ path: req.url ?? "", headers: req.headers, body });
      res.writeHead(status, { "content-type": "text/plain" });
      res.end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    stop: () => new Promise((r) => server.close(() => r())),
  };
}
