// Small pieces shared by the chart clients: credentials as a header, digests.
import { basicAuth, hex } from "../core/json.ts";
import type { SourceAuth } from "../reconcile/ports.ts";

/** Chart repository credentials as an Authorization header: token → Bearer; username/password → Basic. */
export function authorizationFor(auth: SourceAuth | undefined): string | undefined {
  if (auth?.token && !auth.username) return `Bearer ${auth.token}`;
  const user = auth?.username ?? "";
  const pass = auth?.token ?? auth?.password ?? "";
  if (user === "" && pass === "") return undefined;
  return basicAuth(user, pass);
}

/** The credential strings of `auth` (to scrub from messages). */
export function secretsOf(auth: SourceAuth | undefined): string[] {
  return [auth?.password, auth?.token].filter((s): s is string => !!s);
}

/** "sha256:<lower-case hex>" of `bytes` (Web Crypto). */
export async function sha256Digest(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return `sha256:${hex(new Uint8Array(digest))}`;
}
