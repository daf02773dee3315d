// Helpers shared by the adapter's parts: one counted request, path segments, API errors.
import { KubeApiError } from "../core/index.ts";
import type { Verb } from "../reconcile/ports.ts";
import type { KubeRequest, KubeResponse } from "./transport.ts";

/** One counted request to the API server (never throws on HTTP status; 503 when unreachable). */
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

/** The KubeApiError for an HTTP error response: its status, Status.reason and message. */
export function toError(res: KubeResponse, what: string): KubeApiError {
  const body = (typeof res.body === "object" && res.body !== null ? res.body : {}) as {
    reason?: string;
    message?: string;
  };
  const message =
    body.message ?? (typeof res.body === "string" ? res.body.slice(0, 300) : `HTTP ${res.status}`);
  return new KubeApiError(res.status, body.reason ?? "Unknown", `${what}: ${message}`);
}
