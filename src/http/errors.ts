// The one error path of the HTTP app: every failure becomes `{"message": ..., ...details}`.
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { KubeApiError, type Redactor } from "../core/index.ts";
import { OperationRefused } from "./operations.ts";

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
 *   → 502 "kubernetes API error";
 * - anything else → 500 "internal error" (logged; no stack or message leaves the process).
 * Every body is redacted with `redactor` (issue 11: an API server message may echo a Secret's
 * value).
 */
export function errorResponse(err: Error, c: Context, log?: Log, redactor?: Redactor): Response {
  const json = (body: Record<string, unknown>, status: ContentfulStatusCode) =>
    c.json(redactor ? redactor.redactValue(body) : body, status);
  if (err instanceof HttpError) {
    return json({ message: err.message, ...err.details }, err.status);
  }
  if (err instanceof OperationRefused) {
    return json({ message: err.message, ...err.details }, err.status);
  }
  if (err instanceof HTTPException) {
    const status = err.status as ContentfulStatusCode;
    return json({ message: err.message || defaultMessage(status) }, status);
  }
  if (err instanceof KubeApiError) {
    if (err.status === 404 || err.status === 409) {
      return json({ message: err.message, reason: err.reason }, err.status);
    }
    log?.({ msg: "kubernetes API error", status: err.status, reason: err.reason, ...where(c) });
    return json({ message: "kubernetes API error", status: err.status, reason: err.reason }, 502);
  }
  log?.({ msg: "unexpected error", error: err.name, detail: err.message, ...where(c) });
  return json({ message: "internal error" }, 500);
}

function where(c: Context): Record<string, string> {
  return { method: c.req.method, path: c.req.path };
}

function defaultMessage(status: number): string {
  if (status === 413) return "request body too large";
  if (status === 401) return "unauthorized";
  return `HTTP ${status}`;
}
