// ImagePort over the OCI distribution API: resolves repository:tag to a manifest digest with one
// HEAD (plus a GET when the registry leaves out Docker-Content-Digest), following Docker's token
// auth (Bearer) or a Basic challenge. Runs in Node and in Cloudflare workerd: Web APIs only
// (fetch, URL, Headers, crypto.subtle, AbortSignal.timeout, btoa).
// Specs: https://github.com/opencontainers/distribution-spec/blob/main/spec.md and
// https://distribution.github.io/distribution/spec/auth/token/
import type { ImageSource } from "../app/index.ts";
import type { GitAuth, ImagePort } from "../reconcile/ports.ts";
import { SourceError } from "../reconcile/ports.ts";
import { describeError, scrub } from "./http.ts";

/** Host that Docker Hub references ("nginx", "org/web", "docker.io/...") are fetched from. */
export const DOCKER_HUB_HOST = "registry-1.docker.io";
/**
 * Username sent with a bare `token` (no `username`) in the Secret. Google's registries require
 * exactly this name for an access token; GHCR and GitLab accept any name with a token.
 */
export const REGISTRY_TOKEN_USERNAME = "oauth2accesstoken";

/** Media types asked for, in order: multi-arch indexes first, so the digest pins every platform. */
export const MANIFEST_MEDIA_TYPES: readonly string[] = [
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.docker.distribution.manifest.v2+json",
];

const FIELD = "spec.source.image.repository";
const DIGEST = /^sha256:[0-9a-f]{64}$/;
/** Tag grammar from the distribution spec. */
const TAG = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;
/** Repository name grammar (path components) from the distribution spec. */
const NAME = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/;
const LABEL = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
/** Docker's domain grammar: DNS name or [IPv6], optional port. */
const HOST = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?$`);
/** A digest suffix as Docker writes it: "@algorithm:hex". */
const DIGEST_SUFFIX = /@[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/;
/** Characters a bearer token may have (visible ASCII: it goes into a header unchanged). */
const TOKEN_CHARS = /^[\x21-\x7e]+$/;
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);
const ANONYMOUS_HINT =
  ": no credentials were given; the repository may be private (set spec.source.image.secretRef) or may not exist";
const KiB = 1024;
const MAX_TOKEN_BYTES = 64 * KiB;
const MAX_MANIFEST_BYTES = 4 * KiB * KiB;
const MAX_REPOSITORY_LENGTH = 255;

export interface ImagePortOptions {
  /** HTTP client (default the global fetch). */
  fetch?: typeof fetch;
  /** Deadline for one resolve() call, all requests and bodies included, ms (default 15 000). */
  timeoutMs?: number;
  /**
   * Registries reached over plain http: "host" (any port) or "host:port", case-insensitive.
   * localhost, 127.0.0.1 and [::1] always are; every other registry is https.
   */
  insecureHosts?: readonly string[];
}

/** Where an image repository lives: registry host (with port, if any) and repository name. */
export interface ImageReference {
  /** "registry-1.docker.io", "ghcr.io", "localhost:5000", "[::1]:5000", ... */
  host: string;
  /** Path of the repository on the registry: "library/nginx", "org/web", ... */
  name: string;
}

/**
 * Splits spec.source.image.repository as Docker does. Without a "/", or when the first segment
 * has no "." or ":" and is not "localhost", the repository is on Docker Hub (one-segment names get
 * "library/"); otherwise the first segment is the registry host. "docker.io" and "index.docker.io"
 * mean Docker Hub. Throws SourceError (not transient) for a repository holding a tag ("web:1.2"),
 * a digest ("web@sha256:..."), a scheme, userinfo, upper-case or other characters the distribution
 * spec does not allow in a name.
 */
export function parseImageReference(repository: string): ImageReference {
  const quoted = JSON.stringify(
    repository.length > 100 ? `${repository.slice(0, 100)}…` : repository,
  );
  const invalid = (why: string) => new SourceError(`invalid ${FIELD} ${quoted}: ${why}`, false);
  if (repository.includes("@")) {
    const at = repository.lastIndexOf("@");
    if (DIGEST_SUFFIX.test(repository)) {
      const bare = JSON.stringify(repository.slice(0, at));
      throw new SourceError(
        `invalid ${FIELD} ${bare}@…: it holds a digest; give the repository alone and the tag in spec.source.image.tag`,
        false,
      );
    }
    // Possibly "user:password@host/...": never echo it.
    throw new SourceError(
      `invalid ${FIELD}: it must not contain "@" (put registry credentials in spec.source.image.secretRef)`,
      false,
    );
  }
  if (repository.length === 0) throw new SourceError(`${FIELD} is empty`, false);
  if (repository.length > MAX_REPOSITORY_LENGTH) {
    throw invalid(`longer than ${MAX_REPOSITORY_LENGTH} characters`);
  }
  if (repository.includes("://")) {
    throw invalid('give the registry host without a scheme, e.g. "registry.example.com/org/web"');
  }
  const slash = repository.indexOf("/");
  const first = slash < 0 ? "" : repository.slice(0, slash);
  const isHost = slash >= 0 && (/[.:]/.test(first) || first === "localhost");
  let host = isHost ? first : DOCKER_HUB_HOST;
  let name = isHost ? repository.slice(slash + 1) : repository;
  const last = name.slice(name.lastIndexOf("/") + 1);
  if (last.includes(":")) {
    throw invalid("it holds a tag; give the repository alone and the tag in spec.source.image.tag");
  }
  if (isHost) {
    if (!HOST.test(host) || !validUrlHost(host))
      throw invalid(`"${host}" is not a valid registry host`);
    const lower = host.toLowerCase();
    if (lower === "docker.io" || lower === "index.docker.io") host = DOCKER_HUB_HOST;
  }
  if (!NAME.test(name)) {
    throw invalid(
      'a name is lower-case letters and digits separated by ".", "_", "__", "-" or "/"',
    );
  }
  if (host === DOCKER_HUB_HOST && !name.includes("/")) name = `library/${name}`;
  return { host, name };
}

/**
 * The base URL ("https://host" or "http://host", no trailing slash) of the registry at `host`:
 * plain http for localhost, 127.0.0.1 and [::1] (any port) and for hosts in `insecureHosts`
 * (matched as "host" for any port, or "host:port"), https otherwise.
 */
export function registryBaseUrl(host: string, insecureHosts: readonly string[] = []): string {
  const lower = host.toLowerCase();
  const hostname = lower.replace(/:[0-9]+$/, "");
  const insecure =
    LOOPBACK.has(hostname) ||
    insecureHosts.some((h) => {
      const entry = h.trim().toLowerCase();
      return entry === lower || entry === hostname;
    });
  return `${insecure ? "http" : "https"}://${host}`;
}

/**
 * An ImagePort speaking the OCI distribution API.
 *
 * resolve(source, auth) → "sha256:<64 hex>", the digest of the manifest that source.repository
 * (see parseImageReference) has under source.tag now: `HEAD /v2/<name>/manifests/<tag>` asking
 * for OCI indexes and manifests and Docker manifest lists and v2 manifests (so a multi-arch tag
 * pins its index), the digest read from Docker-Content-Digest; registries that leave that header
 * out get a `GET` and the digest is the sha256 of the body (at most 4 MiB). A digest that is not
 * exactly sha256:<64 lower-case hex> is refused.
 *
 * Auth, on a 401: a `Bearer realm=...,service=...,scope=...` challenge → GET the realm with
 * service and scope (repository:<name>:pull when none is given), with HTTP basic credentials
 * (and `account=<username>`, as the Docker CLI sends) when `auth` has some and anonymously
 * otherwise, read `token` (or `access_token`) from the JSON (at most 64 KiB), retry once with
 * `Authorization: Bearer`. A realm must be https (http only when the registry itself is http)
 * and may be on another host, as Docker Hub's is; credentials go there as Docker sends them. A
 * `Basic` challenge → retry once with the credentials. Credentials: auth.token → basic as
 * (auth.username or "oauth2accesstoken", token); else (auth.username, auth.password).
 *
 * Errors are SourceError and never hold credentials or tokens. Not transient: invalid repository
 * or tag, 401/403 after auth ("authentication failed for <host>/<name> (HTTP 401)", plus a hint
 * when no credentials were given), 404 ("image <repository>:<tag> not found"), a bad digest,
 * oversize bodies, hostile or broken token services, other 4xx. Transient: network failures,
 * the deadline (timeoutMs for the whole call), 408, 429 and 5xx.
 */
export function createImagePort(options: ImagePortOptions = {}): ImagePort {
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const timeoutMs = options.timeoutMs ?? 15_000;
  const insecureHosts = options.insecureHosts ?? [];

  return {
    async resolve(source: ImageSource, auth: GitAuth | undefined): Promise<string> {
      const { host, name } = parseImageReference(source.repository);
      const tag = source.tag;
      if (!TAG.test(tag)) {
        const shown = JSON.stringify(tag.length > 140 ? `${tag.slice(0, 140)}…` : tag);
        throw new SourceError(
          `invalid spec.source.image.tag ${shown}: a tag matches [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`,
          false,
        );
      }
      const base = registryBaseUrl(host, insecureHosts);
      const where = `${host}/${name}`;
      const image = `${source.repository}:${tag}`;
      const creds = credentials(auth);
      const secrets = [auth?.password, auth?.token].filter((s): s is string => !!s);
      if (creds) secrets.push(basicAuth(creds));
      const signal = AbortSignal.timeout(timeoutMs);
      const manifestUrl = `${base}/v2/${name}/manifests/${tag}`;
      const accept = MANIFEST_MEDIA_TYPES.join(", ");

      /** fetch under the deadline (also when an injected fetch ignores the signal). */
      const send = (url: string, method: string, headers: Record<string, string>) =>
        raceSignal(doFetch(url, { method, headers, signal, redirect: "follow" }), signal);

      // Docker Hub answers 401 for a repository that does not exist, as for a private one.
      const authFailed = (status: number) =>
        new SourceError(
          `authentication failed for ${where} (HTTP ${status})${creds ? "" : ANONYMOUS_HINT}`,
          false,
        );

      /** Maps a non-2xx manifest response to the SourceError to throw. */
      const statusError = (res: Response): SourceError => {
        const status = res.status;
        if (status === 401 || status === 403) return authFailed(status);
        if (status === 404) return new SourceError(`image ${image} not found`, false);
        const transient = status === 408 || status === 429 || status >= 500;
        return new SourceError(
          `registry ${host} answered HTTP ${status} for ${name}:${tag}`,
          transient,
        );
      };

      /** The Authorization header answering the 401 `res`, fetching a bearer token if asked. */
      const authorize = async (res: Response): Promise<string> => {
        const challenges = parseChallenges(res.headers.get("www-authenticate") ?? "");
        const bearer = challenges.find((c) => c.scheme === "bearer");
        if (bearer) {
          const token = await fetchToken(bearer.params);
          secrets.push(token);
          return `Bearer ${token}`;
        }
        if (creds && challenges.some((c) => c.scheme === "basic")) return basicAuth(creds);
        throw authFailed(res.status);
      };

      /** GETs a bearer token from the challenge's realm (Docker token auth). */
      const fetchToken = async (params: Map<string, string>): Promise<string> => {
        const realm = params.get("realm") ?? "";
        let url: URL;
        try {
          url = new URL(realm);
        } catch {
          throw new SourceError(
            `registry ${host} sent a Bearer challenge without a valid realm`,
            false,
          );
        }
        const secure =
          url.protocol === "https:" || (url.protocol === "http:" && base.startsWith("http:"));
        if (!secure) {
          throw new SourceError(
            `registry ${host} named a token service with scheme "${url.protocol}"; only https (or http for an http registry) is followed`,
            false,
          );
        }
        if (url.username || url.password) {
          throw new SourceError(
            `registry ${host} named a token service URL with userinfo; refused`,
            false,
          );
        }
        const service = params.get("service");
        if (service) url.searchParams.set("service", service);
        if (creds?.user) url.searchParams.set("account", creds.user);
        url.searchParams.set("scope", params.get("scope") || `repository:${name}:pull`);
        const headers: Record<string, string> = { accept: "application/json" };
        if (creds) headers["authorization"] = basicAuth(creds);
        const res = await send(url.href, "GET", headers);
        const tokenHost = url.host;
        if (res.status !== 200) {
          discard(res);
          if (res.status === 401 || res.status === 403) throw authFailed(res.status);
          const transient = res.status === 408 || res.status === 429 || res.status >= 500;
          throw new SourceError(
            `token service ${tokenHost} answered HTTP ${res.status} for ${where}`,
            transient,
          );
        }
        const body = await readCapped(
          res,
          MAX_TOKEN_BYTES,
          signal,
          `token response from ${tokenHost}`,
        );
        let json: unknown;
        try {
          json = JSON.parse(new TextDecoder().decode(body));
        } catch {
          throw new SourceError(
            `token service ${tokenHost} sent a response that is not JSON`,
            false,
          );
        }
        const fields = (json ?? {}) as { token?: unknown; access_token?: unknown };
        const token =
          typeof fields.token === "string" && fields.token !== ""
            ? fields.token
            : fields.access_token;
        if (typeof token !== "string" || token === "") {
          throw new SourceError(`token service ${tokenHost} sent no token for ${where}`, false);
        }
        if (!TOKEN_CHARS.test(token)) {
          throw new SourceError(
            `token service ${tokenHost} sent a malformed token; refused`,
            false,
          );
        }
        return token;
      };

      try {
        const headers: Record<string, string> = { accept };
        let res = await send(manifestUrl, "HEAD", headers);
        if (res.status === 401) {
          discard(res);
          headers["authorization"] = await authorize(res);
          res = await send(manifestUrl, "HEAD", headers);
        }
        if (res.status === 200) {
          discard(res);
          const header = res.headers.get("docker-content-digest");
          if (header !== null) return checkDigest(header.trim(), host, `${name}:${tag}`);
        } else if (res.status !== 405 && res.status !== 501) {
          // 405/501: a registry without HEAD support; GET instead.
          discard(res);
          throw statusError(res);
        } else {
          discard(res);
        }
        res = await send(manifestUrl, "GET", headers);
        if (res.status !== 200) {
          discard(res);
          throw statusError(res);
        }
        const body = await readCapped(res, MAX_MANIFEST_BYTES, signal, `manifest ${where}:${tag}`);
        return `sha256:${await sha256Hex(body)}`;
      } catch (err) {
        if (err instanceof SourceError) throw err;
        if (signal.aborted) {
          throw new SourceError(`timed out after ${timeoutMs} ms reading ${where}:${tag}`, true);
        }
        throw new SourceError(
          `could not read ${where}:${tag}: ${scrub(describeError(err), secrets)}`,
          true,
        );
      }
    },
  };
}

/** One challenge of a WWW-Authenticate header: lower-cased scheme, parameters by lower-cased name. */
export interface AuthChallenge {
  scheme: string;
  params: Map<string, string>;
}

/**
 * Parses a WWW-Authenticate value (RFC 9110 challenges, several possibly joined by ", ") into
 * challenges: `Bearer realm="https://auth/token",service="reg",scope="repository:a:pull,push"`
 * → [{ scheme: "bearer", params: realm, service, scope }]. Quoted values may hold commas and
 * backslash escapes; malformed trailing input is ignored.
 */
export function parseChallenges(header: string): AuthChallenge[] {
  const out: AuthChallenge[] = [];
  const tokenRe = /[!#$%&'*+.^_`|~0-9A-Za-z-]+/y;
  let i = 0;
  const skip = (chars: RegExp) => {
    while (i < header.length && chars.test(header[i] ?? "")) i++;
  };
  const readToken = (): string | undefined => {
    tokenRe.lastIndex = i;
    const m = tokenRe.exec(header);
    if (!m) return undefined;
    i = tokenRe.lastIndex;
    return m[0];
  };
  let current: AuthChallenge | undefined;
  while (i < header.length) {
    skip(/[\s,]/);
    const word = readToken();
    if (word === undefined) break;
    skip(/[ \t]/);
    if (header[i] === "=" && current !== undefined) {
      // An auth-param of the current challenge. (token68 credentials, "Negotiate abc==", are
      // not needed here and parse as junk parameters.)
      i++;
      skip(/[ \t]/);
      let value = "";
      if (header[i] === '"') {
        i++;
        while (i < header.length && header[i] !== '"') {
          if (header[i] === "\\" && i + 1 < header.length) i++;
          value += header[i];
          i++;
        }
        i++;
      } else {
        value = readToken() ?? "";
      }
      current.params.set(word.toLowerCase(), value);
      continue;
    }
    if (header[i] === "=") break; // a parameter before any scheme: malformed
    current = { scheme: word.toLowerCase(), params: new Map() };
    out.push(current);
  }
  return out;
}

function credentials(auth: GitAuth | undefined): { user: string; pass: string } | undefined {
  if (auth?.token) return { user: auth.username || REGISTRY_TOKEN_USERNAME, pass: auth.token };
  if (auth?.username || auth?.password) {
    return { user: auth.username ?? "", pass: auth.password ?? "" };
  }
  return undefined;
}

function basicAuth(creds: { user: string; pass: string }): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(`${creds.user}:${creds.pass}`)) {
    binary += String.fromCharCode(byte);
  }
  return `Basic ${btoa(binary)}`;
}

function checkDigest(digest: string, host: string, what: string): string {
  if (DIGEST.test(digest)) return digest;
  throw new SourceError(
    `registry ${host} sent a malformed Docker-Content-Digest for ${what} (want sha256:<64 lower-case hex>); refused`,
    false,
  );
}

function validUrlHost(host: string): boolean {
  try {
    new URL(`http://${host}/`);
    return true;
  } catch {
    return false;
  }
}

/** `promise`, or a rejection with the signal's reason as soon as `signal` aborts. */
function raceSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/** Reads the body of `res`, at most `max` bytes (SourceError, not transient, past that). */
async function readCapped(
  res: Response,
  max: number,
  signal: AbortSignal,
  what: string,
): Promise<Uint8Array> {
  const tooBig = () => new SourceError(`${what} is larger than ${max} bytes; refused`, false);
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > max) {
    discard(res);
    throw tooBig();
  }
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await raceSignal(reader.read(), signal);
      if (done) break;
      total += value.byteLength;
      if (total > max) throw tooBig();
      chunks.push(value);
    }
  } catch (err) {
    reader.cancel().catch(() => {});
    throw err;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** Drops an unread body so the connection can be reused. */
function discard(res: Response): void {
  if (res.body && !res.bodyUsed) res.body.cancel().catch(() => {});
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const hash = new Uint8Array(
    await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>),
  );
  let hex = "";
  for (const byte of hash) hex += byte.toString(16).padStart(2, "0");
  return hex;
}
