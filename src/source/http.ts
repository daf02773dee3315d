// HTTP plumbing for the Git port: credentials, a guarded HttpClient (deadline + download cap),
// credential-free URLs for messages (no userinfo, no query, no fragment), and the mapping of
// failures to SourceError.
// Runs in Node and in Cloudflare workerd: Web APIs only (fetch, URL, btoa, AbortController).
import type { HttpClient } from "isomorphic-git";
import { basicAuth, SourceError, transientStatus } from "../core/index.ts";
import type { SourceAuth } from "../reconcile/ports.ts";

/** Username sent with a bare token (GitHub's convention; GitLab and Gitea accept any name). */
export const TOKEN_USERNAME = "x-access-token";

/**
 * A repository URL split for use: `url` has no userinfo (but keeps the query: servers may need
 * it); `display` is safe to put in messages (see {@link displayUrl}).
 */
export interface Remote {
  url: string;
  display: string;
  /** Headers to send with every request (Authorization when there are credentials). */
  headers: Record<string, string>;
  /** Credential strings to scrub from any text that reaches a message. */
  secrets: string[];
}

/**
 * Splits `rawUrl` into a credential-free URL and request headers. Credentials come from `auth`
 * (token → basic auth as `auth.username ?? "x-access-token"`:token; else username:password),
 * falling back to userinfo in the URL. Throws SourceError (not transient) for a malformed or
 * non-http(s) URL.
 */
export function remoteFor(rawUrl: string, auth: SourceAuth | undefined): Remote {
  let parsed: URL;
  try {
    parsed = new URL(rawUrl);
  } catch {
    throw new SourceError(`invalid repository URL ${displayUrl(rawUrl)}`, false);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new SourceError(`repository URL ${displayUrl(rawUrl)} is not http(s)`, false);
  }
  const urlUser = decodeURIComponent(parsed.username);
  const urlPass = decodeURIComponent(parsed.password);
  // Query values may be tokens (?access_token=...): scrubbed from error text like passwords.
  const queryValues = [...parsed.searchParams.values()].filter((v) => v.length >= MIN_QUERY_SECRET);
  const candidates = [
    urlPass,
    parsed.password,
    auth?.password ?? "",
    auth?.token ?? "",
    parsed.search.slice(1),
    ...queryValues,
    ...queryValues.map((v) => encodeURIComponent(v)),
  ];
  const secrets = [...new Set(candidates.filter((s) => s.length > 0))];
  parsed.username = "";
  parsed.password = "";
  const url = parsed.href.replace(/\/+$/, "");
  const headers: Record<string, string> = {};
  let user: string | undefined;
  let pass: string | undefined;
  if (auth?.token) [user, pass] = [auth.username || TOKEN_USERNAME, auth.token];
  else if (auth?.username || auth?.password)
    [user, pass] = [auth.username ?? "", auth.password ?? ""];
  else if (urlUser || urlPass) [user, pass] = [urlUser, urlPass];
  if (user !== undefined) headers["Authorization"] = basicAuth(user, pass ?? "");
  return { url, display: displayUrl(url), headers, secrets };
}

/** Query values shorter than this are not treated as secrets (too many false hits in text). */
const MIN_QUERY_SECRET = 4;

/**
 * `rawUrl` as it may appear in a message: no userinfo, and the query string and fragment (which
 * may carry tokens, e.g. `?access_token=...`) replaced by "?…" / "#…". Trailing slashes are
 * dropped. Works on strings that do not parse as URLs too.
 * @example displayUrl("https://u:p@host/repo.git?access_token=x") === "https://host/repo.git?…"
 */
export function displayUrl(rawUrl: string): string {
  const text = rawUrl.trim();
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text)?.[0] ?? "";
  // Userinfo first (up to the last "@" before the path): a password may hold "?" or "#".
  const rest = text.slice(scheme.length).replace(/^[^/]*@/, "");
  const cut = rest.search(/[?#]/);
  const base = cut < 0 ? rest : rest.slice(0, cut);
  const tail = cut < 0 ? "" : rest.slice(cut);
  const hash = tail.indexOf("#");
  const query = tail.startsWith("?") && (hash < 0 ? tail.length : hash) > 1;
  const fragment = hash >= 0 && hash < tail.length - 1;
  return `${scheme}${base.replace(/\/+$/, "")}${query ? "?…" : ""}${fragment ? "#…" : ""}`;
}

/**
 * `text` with every URL in it shown as {@link displayUrl} does: no userinfo
 * ("https://user:pass@"), no query string, no fragment.
 */
export function stripUserinfo(text: string): string {
  return text.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi, (url) => {
    // Keep punctuation that ends a sentence or a clause outside the URL.
    const tail = /[.,;:)\]}]+$/.exec(url)?.[0] ?? "";
    const shown = displayUrl(url.slice(0, url.length - tail.length));
    return shown + tail;
  });
}

/** `text` without URL userinfo, queries and fragments, and with every one of `secrets` replaced by "***". */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = stripUserinfo(text);
  for (const secret of secrets) out = out.split(secret).join("***");
  return out;
}

/** What a guarded client saw: whether it hit the deadline or the download cap. */
export interface Guard {
  signal: AbortSignal;
  bytes: number;
  overLimit: boolean;
  /**
   * Called for each request; what it returns sees every chunk of that response's body and may
   * throw to stop it (the error is kept in `refused`). When it returns bytes, those are passed
   * on in the chunk's place (a filter of the body); when it returns nothing, the chunk is.
   */
  inspect?: (request: {
    url: string;
    method?: string | undefined;
  }) => ((chunk: Uint8Array) => Uint8Array[] | undefined) | undefined;
  refused?: unknown;
}

/**
 * Wraps `inner` so every request carries `guard.signal` and every response body counts toward
 * `maxBytes` (bytes over all requests of one call); past the cap the body throws and
 * `guard.overLimit` is set. `guard.inspect`, when set, sees (and may filter) each body as it
 * streams.
 */
export function guardHttp(inner: HttpClient, guard: Guard, maxBytes: number): HttpClient {
  return {
    async request(req) {
      const res = await inner.request({ ...req, signal: guard.signal });
      const body = res.body;
      if (body === undefined) return res;
      const inspect = guard.inspect?.({ url: req.url, method: req.method });
      async function* counted(): AsyncGenerator<Uint8Array> {
        for await (const chunk of body as AsyncIterable<Uint8Array>) {
          guard.bytes += chunk.byteLength;
          if (guard.bytes > maxBytes) {
            guard.overLimit = true;
            throw new Error("download limit exceeded");
          }
          let replaced: Uint8Array[] | undefined;
          if (inspect) {
            try {
              replaced = inspect(chunk);
            } catch (err) {
              guard.refused = err;
              throw err;
            }
          }
          if (replaced === undefined) yield chunk;
          else yield* replaced;
        }
      }
      return { ...res, body: counted() };
    },
  };
}

/**
 * Maps anything thrown while talking to `remote` to a SourceError whose message holds no
 * credentials. SourceErrors pass through. 401/403 → "authentication failed" and 404 → "not
 * found" (not transient); 408, 429, 5xx, network failures and unknown errors are transient.
 * A peer's HTTP answer is named by its status, never quoted; of a malformed protocol answer
 * only the Git server's ERR packet is quoted (then redacted like any message).
 */
export function toSourceError(err: unknown, remote: Remote): SourceError {
  if (err instanceof SourceError) return err;
  const where = remote.display;
  const e = (err ?? {}) as { code?: unknown; message?: unknown; cause?: unknown; data?: unknown };
  const code = typeof e.code === "string" ? e.code : "";
  if (code === "HttpError") {
    const status = Number((e.data as { statusCode?: unknown } | undefined)?.statusCode);
    if (status === 401 || status === 403) {
      return new SourceError(`authentication failed for ${where} (HTTP ${status})`, false);
    }
    if (status === 404) return new SourceError(`repository not found: ${where} (HTTP 404)`, false);
    return new SourceError(`Git server ${where} answered HTTP ${status}`, transientStatus(status));
  }
  if (code === "SmartHttpError") {
    return new SourceError(`${where} is not a Git smart HTTP server`, false);
  }
  if (code === "ParseError") {
    // The server's own words reach the author only through the pack protocol's error packet
    // ("ERR <message>", which git shows as "remote error: <message>"): anything else it answered
    // (a proxy's error page, a debug dump) may echo the request's headers, and is not quoted.
    const actual = String((e.data as { actual?: unknown } | undefined)?.actual ?? "");
    const refusal = /^ERR (.*)$/s.exec(actual.trimEnd());
    return refusal
      ? new SourceError(
          `Git server ${where} refused: ERR ${scrub(refusal[1] ?? "", remote.secrets)}`,
          true,
        )
      : new SourceError(
          `${where} answered something other than the Git protocol (not quoted)`,
          true,
        );
  }
  if (code === "UrlParseError" || code === "UnknownTransportError") {
    return new SourceError(`invalid repository URL ${where}`, false);
  }
  return new SourceError(
    `could not read from ${where}: ${scrub(describeError(err), remote.secrets)}`,
    true,
  );
}

/** "message (CODE message)" for an Error, including fetch's nested cause. */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
  const parts = [err.message];
  if (cause && typeof cause === "object") {
    const detail = [cause.code, cause.message].filter((x) => typeof x === "string").join(" ");
    if (detail) parts.push(`(${detail})`);
  }
  return parts.join(" ");
}
