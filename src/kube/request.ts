// Helpers shared by the adapter's parts: one counted request, path segments, API errors.
import { KubeApiError, type StatusCause } from "../core/index.ts";
import type { Verb } from "../reconcile/ports.ts";
import { type KubeRequest, type KubeResponse, KubeTransportError } from "./transport.ts";

/**
 * One counted request to the API server. Never throws on HTTP status; throws the KubeApiError
 * of {@link unanswered} when no answer came.
 */
export type Call = (
  verb: Verb,
  method: string,
  path: string,
  request?: KubeRequest,
) => Promise<KubeResponse>;

/** A path segment, percent-encoded. */
export function enc(segment: string): string {
  return encodeURIComponent(segment);
}

/** The longest message an API error keeps (a 422's message embeds the whole object). */
const MAX_MESSAGE = 500;
/** A cause message longer than this loses its "Invalid value: <dump>" part. */
const MAX_CAUSE = 160;

/**
 * The KubeApiError for an HTTP error response: its status, Status.reason and message. A 422's
 * Status.message repeats each cause with the refused value (for a Job's template, a 2,000
 * character dump of the internal object): when Status.details.causes are present the message
 * is rebuilt from them, each as "field: detail" without the value. At most 500 characters, then
 * how many attempts the retry layer made when more than one.
 */
export function toError(res: KubeResponse, what: string): KubeApiError {
  const body = (typeof res.body === "object" && res.body !== null ? res.body : {}) as {
    reason?: string;
    message?: string;
    details?: { causes?: Array<{ reason?: string; message?: string; field?: string }> };
  };
  const causes = (body.details?.causes ?? []).map((c) => {
    const cause: StatusCause = {};
    if (c.reason !== undefined) cause.reason = c.reason;
    if (c.field !== undefined) cause.field = c.field;
    if (c.message !== undefined) cause.message = shortCause(c.message);
    return cause;
  });
  let message =
    body.message ??
    (typeof res.body === "string" ? res.body.trim().slice(0, 300) : `HTTP ${res.status}`);
  if (causes.length > 0) {
    // `Job.batch "x" is invalid: spec.template: Invalid value: {...}: field is immutable`
    const head = message.split(": ")[0] ?? "";
    const fields = causes.map((c) => (c.field ? `${c.field}: ${c.message ?? ""}` : c.message));
    message = `${head}: ${fields.join("; ")}`;
  }
  if (message.length > MAX_MESSAGE) message = `${message.slice(0, MAX_MESSAGE - 1)}…`;
  const tries =
    res.attempts && res.attempts > 1 ? ` (HTTP ${res.status} after ${res.attempts} attempts)` : "";
  return new KubeApiError(
    res.status,
    body.reason ?? "Unknown",
    `${what}: ${message}${tries}`,
    causes,
  );
}

/**
 * A StatusCause message without the refused value when that is long:
 * "Invalid value: {...2,000 characters...}: field is immutable" → "field is immutable".
 */
export function shortCause(message: string): string {
  if (message.length <= MAX_CAUSE) return message;
  const prefix = "Invalid value: ";
  if (message.startsWith(prefix)) {
    const detail = message.slice(message.lastIndexOf(": ") + 2);
    if (detail.length > 0 && detail.length <= MAX_CAUSE) return detail;
  }
  return `${message.slice(0, MAX_CAUSE - 1)}…`;
}

/**
 * The KubeApiError for a request that got no HTTP answer: 504 Timeout when none came in time,
 * else 503 ServiceUnavailable; the message names the request and the real cause, e.g. "GET /apis/plumb.dev/v1alpha1/apps: connection refused (ECONNREFUSED
 * 127.0.0.1:6443) (3 attempts in 1.8 s)". Anything else is rethrown as it is.
 */
export function unanswered(err: unknown): KubeApiError {
  if (!(err instanceof KubeTransportError)) throw err;
  return err.kind === "timeout"
    ? new KubeApiError(504, "Timeout", err.message)
    : new KubeApiError(503, "ServiceUnavailable", err.message);
}
