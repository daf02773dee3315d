// A webhook delivery's body as each provider sends it: JSON, or a form whose `payload` field
// holds the JSON, and which bytes the provider's signature covers in each case.
import { decodeExact } from "./verify.ts";
import type { Provider } from "./webhooks.ts";

/** The form content type GitHub (its API's default) and Gitea can deliver with. */
export const FORM = "application/x-www-form-urlencoded";

/** A delivery read for verification: the signed bytes and the JSON text of the payload. */
export interface Delivery {
  /** The bytes the provider's HMAC covers (GitHub: the raw body; Gitea: the payload JSON). */
  signed: Uint8Array<ArrayBuffer>;
  /** The JSON text of the event payload; undefined when the body is not UTF-8. */
  payload: string | undefined;
  /** Whether the body was a form (`payload=<url-encoded JSON>`). */
  form: boolean;
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/**
 * Reads a delivery `body` of `provider` sent with `contentType`.
 * - JSON (any content type but the form): the payload is the body, and every provider's
 *   signature covers the body.
 * - `application/x-www-form-urlencoded`: the payload is the form field `payload`.
 *   - GitHub signs the raw body, form encoding included ("Validating webhook deliveries":
 *     HMAC-SHA256 of the request body).
 *   - Gitea signs the payload JSON before form-encoding it: services/webhook/deliver.go
 *     `newDefaultRequest` sends `url.Values{"payload": {PayloadContent}}.Encode()` and
 *     `addDefaultHeaders` computes X-Gitea-Signature over `[]byte(t.PayloadContent)`.
 *   - GitLab always sends `Content-Type: application/json` (WebHookService#build_headers) and
 *     has no form option: a form body is refused.
 * @returns the delivery, or why there is none: a form that is not UTF-8 or has no `payload`,
 *   a GitLab form. (The caller answers 401 when it could not verify the delivery
 *   for lack of one, and otherwise 400 with this message.)
 */
export function readDelivery(
  provider: Provider,
  contentType: string | undefined,
  body: Uint8Array<ArrayBuffer>,
): Delivery | { error: string } {
  const text = decodeExact(body);
  if (mediaType(contentType) !== FORM) return { signed: body, payload: text, form: false };
  if (text === undefined) return { error: "body is not valid UTF-8" };
  if (provider === "gitlab") {
    return { error: `GitLab delivers JSON: expected Content-Type application/json, got ${FORM}` };
  }
  const payload = new URLSearchParams(text).get("payload");
  if (payload === null) return { error: 'form body has no "payload" field' };
  const signed = provider === "gitea" ? new TextEncoder().encode(payload) : body;
  return { signed, payload, form: true };
}
