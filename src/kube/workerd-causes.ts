// What workerd's fetch does not say: it reports a failed TLS handshake as "internal
// error; reference = …" and logs the cause ("TLS handshake failed: invalid peer certificate:
// UnknownIssuer") only to its own output, and a refused or reset connection as "Network
// connection lost.". These words go where the operator reads: the run's error, the HTTP answer.
import type { TransportFailure } from "./transport.ts";

/** workerd's message for a failure it logs but does not expose. */
const INTERNAL = /^internal error; reference = ([0-9a-z]+)$/;

/**
 * The cause of a fetch that workerd rejected, for a request to `url`, or undefined when `err`
 * is not one of workerd's opaque errors (describeCause reads the others). Observed with
 * wrangler 4 (workerd 2026-11): an API server with a private CA gives the internal error, a
 * closed port "Network connection lost.".
 */
export function workerdCause(
  err: unknown,
  url: string,
): { kind: TransportFailure; text: string } | undefined {
  const message = (err as { message?: unknown } | undefined)?.message;
  if (typeof message !== "string") return undefined;
  const internal = INTERNAL.exec(message);
  if (internal && url.startsWith("https:")) {
    return {
      kind: "tls",
      text: `TLS or connection failure inside workerd (reference ${internal[1]}): most likely the server's certificate is not publicly trusted ("invalid peer certificate: UnknownIssuer" in workerd's log), which a Worker's fetch refuses; reach the API server through a Cloudflare Tunnel or Workers VPC, or for wrangler dev through kubectl proxy (npm run dev:worker)`,
    };
  }
  if (message === "Network connection lost.") {
    return {
      kind: "reset",
      text: "connection refused or lost (workerd: Network connection lost.)",
    };
  }
  return undefined;
}
