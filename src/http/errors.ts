// The one error path of the HTTP app: every failure becomes `{"message": ..., ...details}`.
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { KubeApiError, type Redactor } from "../core/index.ts";
import { OperationRefused } from "./operations.ts";
import type { HttpEnv } from "./types.ts";

/** An HTTP error with a JSON body `{message, ...details}`. Throw it from any handler. */
export class HttpError extends HTTPException {
  readonly details: Record<string, unknown>;
  constructor(
    status: ContentfulStatusCode,
    message: string,
    details: Record<string, unknown> = {},
  ) {
    super(status, { message });
    this.details = details;
  }
}

/** Logger for operators. Entries never carry secrets, tokens or request bodies. */
export type Log = (entry: Record<string, unknown>) => void;

/**
 * Maps an error to a JSON response:
 * - HttpError / HTTPException / OperationRefused: its status and message (plus details);
 * - KubeApiError 404 → 404, 409 → 409 (with the API server's message and reason), any other
 *   → 502 "kubernetes API error" with the error's status and reason, and for a request that got
 *   no answer (503, 504) `detail`: the request and the cause, e.g. a TLS failure; the
 *   log entry carries the message of every such error;
 * - anything else → 500 "internal error" (logged; no stack or message leaves the process).
 * Every body is redacted with `redactor` (an API server message may echo a Secret's
 * value). On the web page's routes (`errorPage` set) the same status and message become an
 * HTML page.
 */
export function errorResponse(
  err: Error,
  c: Context<HttpEnv>,
  log?: Log,
  redactor?: Redactor,
): Response | Promise<Response> {
  const described = describeError(err, c, log);
  const body = redactor ? redactor.redactValue(described.body) : described.body;
  const page = c.get("errorPage");
  if (page) return page(described.status, String(body.message));
  return c.json(body, described.status);
}

function describeError(
  err: Error,
  c: Context,
  log?: Log,
): { status: ContentfulStatusCode; body: { message: string } & Record<string, unknown> } {
  if (err instanceof HttpError) {
    return { status: err.status, body: { message: err.message, ...err.details } };
  }
  if (err instanceof OperationRefused) {
    return { status: err.status, body: { message: err.message, ...err.details } };
  }
  if (err instanceof HTTPException) {
    const status = err.status as ContentfulStatusCode;
    return { status, body: { message: err.message || defaultMessage(status) } };
  }
  if (err instanceof KubeApiError) {
    if (err.status === 404 || err.status === 409) {
      return { status: err.status, body: { message: err.message, reason: err.reason } };
    }
    // The error's message says which request failed and why (a TLS UnknownIssuer, a refused
    // connection, the API server's own words): the log and the answer both carry it.
    log?.({
      msg: "kubernetes API error",
      status: err.status,
      reason: err.reason,
      detail: err.message,
      ...where(c),
    });
    // No answer (503, 504): why not is the operator's first question, and says nothing of the
    // cluster's contents; an answer's own message (403, 500) stays in the log.
    const unanswered = err.status === 503 || err.status === 504;
    return {
      status: 502,
      body: {
        message: "kubernetes API error",
        status: err.status,
        reason: err.reason,
        ...(unanswered ? { detail: err.message } : {}),
      },
    };
  }
  log?.({ msg: "unexpected error", error: err.name, detail: err.message, ...where(c) });
  return { status: 500, body: { message: "internal error" } };
}

function where(c: Context): Record<string, string> {
  return { method: c.req.method, path: c.req.path };
}

function defaultMessage(status: number): string {
  if (status === 413) return "request body too large";
  if (status === 401) return "unauthorized";
  return `HTTP ${status}`;
}
