// Names the cause of a request that got no HTTP answer, in words an operator can act on, with
// the runtime's own code kept (never "unreachable" with the cause hidden).
import type { TransportFailure } from "./transport.ts";

/** What went wrong, for a KubeTransportError. */
export interface Cause {
  kind: TransportFailure;
  code: string | undefined;
  /** e.g. "connection refused (ECONNREFUSED)". */
  text: string;
}

/** OpenSSL verification codes (Node's err.code) meaning the issuer is not trusted. */
const UNKNOWN_ISSUER = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
]);

const WORDS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection closed while sending",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed (temporary)",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
  ECONNABORTED: "connection aborted",
  UND_ERR_SOCKET: "connection closed by the server",
};

const TLS_WORDS: Record<string, string> = {
  CERT_HAS_EXPIRED: "TLS: the server's certificate has expired",
  CERT_NOT_YET_VALID: "TLS: the server's certificate is not valid yet",
  ERR_TLS_CERT_ALTNAME_INVALID:
    "TLS: the server's certificate does not name this host (set tls-server-name, or use a name the certificate lists)",
};

/** Codes for failures before any byte of the request reached the server. */
const BEFORE_SEND = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  ...UNKNOWN_ISSUER,
]);

/**
 * Describes `err` (a Node socket/TLS error, a fetch TypeError with a `cause`, or anything).
 * `sent` says whether the request had been written when it failed; codes that can only happen
 * while connecting (refused, DNS, certificate checks) count as not sent whatever it says.
 */
export function describeCause(err: unknown, sent: boolean): Cause & { sent: boolean } {
  const e = innermost(err);
  const code = typeof e.code === "string" ? e.code : undefined;
  const message = typeof e.message === "string" ? e.message : String(err);
  const beforeSend = code !== undefined && BEFORE_SEND.has(code);
  let kind: TransportFailure = beforeSend ? "connect" : "reset";
  let text: string;
  if (code && UNKNOWN_ISSUER.has(code)) {
    kind = "tls";
    text = `TLS: the server's certificate is not signed by a trusted CA (UnknownIssuer; give the cluster's certificate-authority in the kubeconfig) (${code})`;
  } else if (code && TLS_WORDS[code]) {
    kind = "tls";
    text = `${TLS_WORDS[code]} (${code})`;
  } else if (code && WORDS[code]) {
    text = `${WORDS[code]} (${code}${address(e)})`;
  } else if (/wrong version number|packet length too long|unknown protocol/i.test(message)) {
    kind = "tls";
    text = `TLS handshake failed: the server does not speak TLS (is it an http:// server?) (${code ?? "EPROTO"})`;
    return { kind, code, text, sent: false };
  } else {
    text = code ? `${message} (${code})` : message;
  }
  return { kind, code, text, sent: sent && !beforeSend };
}

function address(e: { address?: unknown; port?: unknown }): string {
  if (typeof e.address !== "string") return "";
  return typeof e.port === "number" ? ` ${e.address}:${e.port}` : ` ${e.address}`;
}

/** The most specific error in a `cause` chain (fetch wraps socket errors in a TypeError). */
function innermost(err: unknown): {
  code?: unknown;
  message?: unknown;
  address?: unknown;
  port?: unknown;
} {
  let e = err as { cause?: unknown; code?: unknown } | undefined;
  for (let i = 0; i < 5 && e && typeof e === "object"; i++) {
    const next = e.cause as { code?: unknown } | undefined;
    if (!next || typeof next !== "object") break;
    e = next;
  }
  return (e && typeof e === "object" ? e : { message: String(err) }) as {
    code?: unknown;
    message?: unknown;
  };
}
