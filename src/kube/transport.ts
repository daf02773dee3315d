// The transport to the API server: one HTTP request in, status and parsed body out. Made by
// node-transport.ts (Node: kubeconfig, client certificates, CA) or fetch-transport.ts (workerd:
// the global fetch and a bearer token); retry.ts wraps either with client-go's retry rules.

export interface KubeResponse {
  status: number;
  /** Parsed JSON body, or the text when it is not JSON (undefined when empty). */
  body: unknown;
  /** Response headers, names lower-cased (Retry-After is what the retry layer reads). */
  headers?: Record<string, string>;
  /** Requests sent for this answer when the retry layer sent more than one. */
  attempts?: number;
}

export interface KubeRequest {
  query?: Record<string, string>;
  body?: unknown;
  contentType?: string;
  /** Accept header; application/json unless given (e.g. the Table form kubectl asks for). */
  accept?: string;
  /**
   * The caller handles a repeat of this request itself (e.g. a create of a fixed name whose
   * 409 AlreadyExists it reads as "mine, from an attempt whose answer was lost"): the retry
   * layer may then resend it like an idempotent request.
   */
  idempotent?: boolean;
  /**
   * This attempt's deadline, ms: a request with no answer by then fails with a
   * KubeTransportError of kind "timeout" (set by the retry layer; none when absent).
   */
  timeoutMs?: number;
  /**
   * Aborted when the caller may no longer send the request (a reconcile run whose Lease was
   * lost): not sent, nor sent again by the retry layer, and cut if in flight; the abort's
   * reason is thrown.
   */
  signal?: AbortSignal;
}

/**
 * One request to the API server. `path` starts with "/api" or "/apis". Resolves for every HTTP
 * status; rejects with KubeTransportError when no HTTP answer came (refused, reset, TLS, timeout).
 */
export type KubeTransport = (
  method: string,
  path: string,
  request?: KubeRequest,
) => Promise<KubeResponse>;

/**
 * Why no HTTP answer came: "connect" (never reached the server: refused, DNS), "tls" (the
 * server's certificate was refused, or it does not speak TLS: sending again will not help),
 * "reset" (the connection broke after the request was sent), "timeout" (no answer in time),
 * "config" (the credentials could not be read or made).
 */
export type TransportFailure = "connect" | "tls" | "reset" | "timeout" | "config";

/**
 * A request that got no HTTP answer. The message names the request (method and path, never
 * the body) and the cause as the runtime reported it, e.g.
 * `GET /api/v1/namespaces/a/secrets/b: TLS: the server's certificate is not signed by a trusted
 * CA (UNABLE_TO_VERIFY_LEAF_SIGNATURE)`.
 */
export class KubeTransportError extends Error {
  readonly method: string;
  readonly path: string;
  readonly kind: TransportFailure;
  /** The cause alone, without the request ("connection reset (ECONNRESET)"). */
  readonly detail: string;
  /** The runtime's error code (ECONNRESET, CERT_HAS_EXPIRED…), when it gave one. */
  readonly code: string | undefined;
  /**
   * False when the request cannot have reached the server (the connection or TLS handshake
   * failed before any byte was written): even a create is then safe to send again.
   */
  readonly sent: boolean;
  constructor(
    method: string,
    path: string,
    kind: TransportFailure,
    cause: string,
    options: { code?: string | undefined; sent: boolean },
  ) {
    super(`${method} ${path}: ${cause}`);
    this.name = "KubeTransportError";
    this.method = method;
    this.path = path;
    this.kind = kind;
    this.detail = cause;
    this.code = options.code;
    this.sent = options.sent;
  }
}

/** The body of a response: JSON when it parses, else the text, undefined when empty. */
export function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text; // not JSON (e.g. a proxy's HTML error page): keep the text
  }
}

/** `path` with `query` appended (values percent-encoded). */
export function withQuery(path: string, query: Record<string, string> | undefined): string {
  const entries = Object.entries(query ?? {});
  if (entries.length === 0) return path;
  return `${path}?${new URLSearchParams(entries).toString()}`;
}
