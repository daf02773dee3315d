// Bearer-token authentication and namespace authorization for /api.
import type { ApiToken } from "./config.ts";
import { HttpError } from "./errors.ts";
import { bytesEqual, sha256 } from "./verify.ts";

/** The authenticated caller: the token's name and namespaces, never the token. */
export interface Caller {
  name: string;
  /** Namespaces the caller may use; undefined = all. */
  namespaces?: readonly string[];
}

/**
 * Builds a lookup of a presented token among `tokens`: the presented token is hashed (SHA-256)
 * and compared with every configured token's hash, all of them, without stopping at a match,
 * so timing tells neither which token matched nor how much of one did.
 * @returns `find(presented)`: the matching ApiToken, or undefined.
 */
export function tokenLookup(
  tokens: readonly ApiToken[],
): (presented: string) => Promise<ApiToken | undefined> {
  let digests: Promise<Array<{ digest: Uint8Array; token: ApiToken }>> | undefined;
  return async (presented) => {
    digests ??= Promise.all(tokens.map(async (t) => ({ digest: await sha256(t.token), token: t })));
    const given = await sha256(presented);
    let found: ApiToken | undefined;
    for (const k of await digests) {
      const equal = bytesEqual(given, k.digest);
      found = equal ? k.token : found;
    }
    return found;
  };
}

/** The Caller of an API token: its name and namespaces, never the token. */
export function callerOf(token: ApiToken): Caller {
  return token.namespaces
    ? { name: token.name, namespaces: token.namespaces }
    : { name: token.name };
}

/**
 * Builds the authenticator for `tokens` (compared as {@link tokenLookup} does).
 * @returns `authenticate(authorizationHeader)`, which resolves to the Caller or throws
 *   HttpError 401 (missing header, not `Bearer <token>`, or unknown token).
 */
export function bearerAuth(
  tokens: readonly ApiToken[],
): (header: string | undefined) => Promise<Caller> {
  const find = tokenLookup(tokens);
  return async (header) => {
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "");
    if (!m?.[1]) {
      throw new HttpError(401, "missing bearer token: send Authorization: Bearer <token>");
    }
    const found = await find(m[1]);
    if (!found) throw new HttpError(401, "invalid bearer token");
    return callerOf(found);
  };
}

/** Whether `caller` may use `namespace`. */
export function mayUse(caller: Caller, namespace: string): boolean {
  return caller.namespaces === undefined || caller.namespaces.includes(namespace);
}

/** Throws HttpError 403 unless `caller` may use `namespace`. */
export function requireNamespace(caller: Caller, namespace: string): void {
  if (!mayUse(caller, namespace)) {
    throw new HttpError(403, `token "${caller.name}" may not use namespace "${namespace}"`);
  }
}
