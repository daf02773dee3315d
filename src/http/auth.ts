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
 * Builds the authenticator for `tokens`. Each request's token is hashed (SHA-256) and compared
 * with every configured token's hash, all of them, without stopping at a match, so timing
 * tells neither which token matched nor how much of one did.
 * @returns `authenticate(authorizationHeader)`, which resolves to the Caller or throws
 *   HttpError 401 (missing header, not `Bearer <token>`, or unknown token).
 */
export function bearerAuth(
  tokens: readonly ApiToken[],
): (header: string | undefined) => Promise<Caller> {
  let digests: Promise<Array<{ digest: Uint8Array; caller: Caller }>> | undefined;
  const known = () => {
    digests ??= Promise.all(
      tokens.map(async (t) => ({
        digest: await sha256(t.token),
        caller: t.namespaces ? { name: t.name, namespaces: t.namespaces } : { name: t.name },
      })),
    );
    return digests;
  };
  return async (header) => {
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "");
    if (!m?.[1]) {
      throw new HttpError(401, "missing bearer token: send Authorization: Bearer <token>");
    }
    const presented = await sha256(m[1]);
    let found: Caller | undefined;
    for (const k of await known()) {
      const equal = bytesEqual(presented, k.digest);
      found = equal ? k.caller : found;
    }
    if (!found) throw new HttpError(401, "invalid bearer token");
    return found;
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
