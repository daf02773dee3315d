// Retries and deadlines around any KubeTransport, after client-go's rest client
// (rest/request.go, rest/with_retry.go): a request the server did not process, or may safely
// process twice, is sent again, honouring Retry-After, bounded in count and in time.
import { refusedBody } from "../core/index.ts";
import { type KubeResponse, type KubeTransport, KubeTransportError } from "./transport.ts";

export interface RetryOptions {
  /** Attempts after the first (client-go: 10). */
  maxRetries?: number;
  /** Deadline of one attempt, ms (default 15 000): a request the server never answers ends. */
  attemptTimeoutMs?: number;
  /** Deadline of the whole sequence, ms (default 30 000, half the reconcile Lease of 60 s). */
  deadlineMs?: number;
  /** Longest Retry-After honoured, ms (default 10 000; longer ones are cut to it). */
  maxRetryAfterMs?: number;
  /** Wait before the first retry when the server gave no Retry-After, ms; doubles (default 250). */
  backoffMs?: number;
  /** Longest such wait, ms (default 4 000). */
  maxBackoffMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Told before each retry (for the log): never the body. */
  onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  /** "GET /api/v1/namespaces/a/secrets/b". */
  request: string;
  /** The attempt that failed (1 = the first). */
  attempt: number;
  /** "HTTP 429 (Retry-After 1)" or the transport error's cause. */
  cause: string;
  waitMs: number;
}

/** The shortest attempt worth sending after a failure, ms (capped by attemptTimeoutMs). */
const MIN_ATTEMPT_MS = 1_000;

/** The defaults, exported for the README and the CLI's settings. */
export const RETRY_DEFAULTS = {
  maxRetries: 10,
  attemptTimeoutMs: 15_000,
  deadlineMs: 30_000,
  maxRetryAfterMs: 10_000,
  backoffMs: 250,
  maxBackoffMs: 4_000,
} as const;

/**
 * Wraps `transport` with client-go's retry rules, extended so that no
 * idempotent request fails for a passing fault. An attempt is sent again when:
 * - the answer is 429: the API server refused the request before running it (priority and
 *   fairness, max-in-flight, "storage is (re)initializing", graceful shutdown) — any method;
 * - the answer is 503 with Retry-After: the server said "not now" and did not run it — any
 *   method;
 * - the answer is another 5xx, or no answer came after the request was sent (reset, timeout):
 *   only when sending it twice does no harm (see {@link isIdempotent}, or the request says
 *   `idempotent: true`); a create (POST) may have been executed, so it is not sent again and
 *   the caller sees the failure;
 * - no connection could be made (refused, DNS): any method, nothing reached the server.
 * Never for other 4xx, for a 500 that refuses the body itself (it does not fit the kind's schema:
 * {@link refusedBody}; the same body fails again), for certificate failures (sending again cannot help) or unreadable
 * credentials. The wait is the server's Retry-After (seconds or an HTTP date, capped), else an
 * exponential backoff; every attempt has a timeout and the sequence a deadline, after which the
 * last answer is returned (with `attempts`) or the last KubeTransportError thrown, its message
 * saying how many attempts were made.
 * A request whose `signal` is aborted (a reconcile run whose Lease ran out) is
 * not sent again: the abort's reason is thrown, before an attempt and after a failed one.
 * A 409 Conflict after a resent write whose first answer was lost is the caller's to handle
 * (a PUT or merge patch carrying a resourceVersion, a DELETE with preconditions).
 */
export function withRetries(transport: KubeTransport, options: RetryOptions = {}): KubeTransport {
  const o = { ...RETRY_DEFAULTS, ...options };
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  // A retry is sent only with this much of the deadline left: an attempt cut to a few ms
  // cannot be answered, and its "no answer within 1 ms" would hide the failure that mattered.
  const minAttemptMs = Math.min(o.attemptTimeoutMs, MIN_ATTEMPT_MS);
  return async (method, path, request = {}) => {
    const start = now();
    const idempotent = request.idempotent ?? isIdempotent(method, request.contentType);
    let answer: KubeResponse | undefined;
    let failure: KubeTransportError | undefined;
    for (let attempt = 1; ; attempt++) {
      // The caller gave up (a reconcile run whose Lease ran out): no attempt more.
      request.signal?.throwIfAborted();
      const left = start + o.deadlineMs - now();
      if (attempt > 1 && left < minAttemptMs) {
        // The wait overran (a loaded machine's timers fire late): the last outcome stands.
        const made = attempt - 1;
        if (answer) return made > 1 ? { ...answer, attempts: made } : answer;
        throw made > 1 ? withAttempts(failure!, made, now() - start) : failure!;
      }
      const timeoutMs = Math.max(1, Math.min(o.attemptTimeoutMs, left));
      answer = undefined;
      failure = undefined;
      try {
        answer = await transport(method, path, { ...request, timeoutMs });
      } catch (err) {
        request.signal?.throwIfAborted();
        if (!(err instanceof KubeTransportError)) throw err;
        failure = err;
      }
      const verdict = answer ? retryAnswer(answer, idempotent) : retryFailure(failure!, idempotent);
      const wait =
        verdict === false
          ? undefined
          : verdict === "backoff"
            ? Math.min(o.maxBackoffMs, o.backoffMs * 2 ** (attempt - 1))
            : Math.min(o.maxRetryAfterMs, verdict);
      const elapsed = now() - start;
      const retry =
        wait !== undefined &&
        attempt <= o.maxRetries &&
        elapsed + wait + minAttemptMs <= o.deadlineMs;
      if (!retry) {
        if (answer) return attempt > 1 ? { ...answer, attempts: attempt } : answer;
        throw attempt > 1 ? withAttempts(failure!, attempt, elapsed) : failure!;
      }
      options.onRetry?.({
        request: `${method} ${path}`,
        attempt,
        cause: answer ? httpCause(answer) : failure!.detail,
        waitMs: wait!,
      });
      await sleep(wait!);
    }
  };
}

/**
 * True when sending the request twice leaves the same result as once: reads, PUT (a replace,
 * usually with a resourceVersion precondition), DELETE, server-side apply and JSON merge
 * patches (RFC 7396: applying one twice equals applying it once). Not POST (a create runs
 * twice, or fails with AlreadyExists after the first one worked), JSON Patch (RFC 6902: "add"
 * to an array appends again) or strategic merge patch (its list directives).
 */
export function isIdempotent(method: string, contentType: string | undefined): boolean {
  switch (method.toUpperCase()) {
    case "GET":
    case "HEAD":
    case "OPTIONS":
    case "PUT":
    case "DELETE":
      return true;
    case "PATCH":
      return /^application\/(apply-patch\+(yaml|json|cbor)|merge-patch\+json)\b/.test(
        contentType ?? "",
      );
    default:
      return false;
  }
}

/** ms to wait, "backoff", or false (do not retry) for an HTTP answer. */
function retryAnswer(res: KubeResponse, idempotent: boolean): number | "backoff" | false {
  const { status } = res;
  if (status < 500 && status !== 429) return false;
  const body = res.body as { reason?: unknown; message?: unknown } | undefined;
  const reason = typeof body?.reason === "string" ? body.reason : "";
  if (typeof body?.message === "string" && refusedBody(status, reason, body.message)) return false;
  const after = retryAfterMs(res.headers?.["retry-after"]);
  if (status === 429 || (status === 503 && after !== undefined)) return after ?? "backoff";
  if (!idempotent) return false;
  return after ?? "backoff";
}

function retryFailure(err: KubeTransportError, idempotent: boolean): "backoff" | false {
  if (err.kind === "tls" || err.kind === "config") return false;
  if (!err.sent) return "backoff";
  return idempotent ? "backoff" : false;
}

/**
 * Retry-After as ms: delay-seconds or an HTTP-date (RFC 9110 §10.2.3); undefined when absent
 * or unreadable. client-go reads only the seconds form; a date is honoured here too.
 */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/^[A-Za-z]{3},? .* GMT$/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function httpCause(res: KubeResponse): string {
  const after = res.headers?.["retry-after"];
  const body = res.body as { message?: unknown } | undefined;
  const message = typeof body?.message === "string" ? `: ${body.message.slice(0, 200)}` : "";
  return `HTTP ${res.status}${after ? ` (Retry-After ${after})` : ""}${message}`;
}

function withAttempts(err: KubeTransportError, attempts: number, ms: number): KubeTransportError {
  return new KubeTransportError(
    err.method,
    err.path,
    err.kind,
    `${err.detail} (${attempts} attempts in ${(ms / 1000).toFixed(1)} s)`,
    { code: err.code, sent: err.sent },
  );
}
