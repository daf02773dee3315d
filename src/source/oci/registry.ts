// A session with one repository on an OCI registry: requests under one deadline, Docker's token
// auth (Bearer) or a Basic challenge answered once, bodies read with a cap, and errors as
// SourceError without credentials. Web APIs only (fetch, URL, AbortSignal.timeout, btoa).
// Spec: https://distribution.github.io/distribution/spec/auth/token/
import { SourceError, transientStatus } from "../../core/errors.ts";
import { basicAuth } from "../../core/json.ts";
import type { SourceAuth } from "../../reconcile/ports.ts";
import { discard, raceSignal, readCapped } from "../body.ts";
import { describeError, scrub } from "../http.ts";
import { parseChallenges } from "./challenge.ts";
import { type ImageReference, registryBaseUrl } from "./reference.ts";

/**
 * Username sent with a bare `token` (no `username`) in the Secret. Google's registries require
 * exactly this name for an access token; GHCR and GitLab accept any name with a token.
 */
export const REGISTRY_TOKEN_USERNAME = "oauth2accesstoken";

/** Characters a bearer token may have (visible ASCII: it goes into a header unchanged). */
const TOKEN_CHARS = /^[\x21-\x7e]+$/;
const anonymousHint = (secretRef: string) =>
  `: no credentials were given; the repository may be private (set ${secretRef}) or may not exist`;
const MAX_TOKEN_BYTES = 64 * 1024;

export interface RegistryOptions {
  /** HTTP client (default the global fetch). */
  fetch?: typeof fetch;
  /** Deadline for the whole session, all requests and bodies included, ms (default 15 000). */
  timeoutMs?: number;
  /**
   * Registries reached over plain http: "host" (any port) or "host:port", case-insensitive.
   * localhost, 127.0.0.1 and [::1] always are; every other registry is https.
   */
  insecureHosts?: readonly string[];
  /** The spec field holding registry credentials, for messages (default spec.source.image.secretRef). */
  secretRefField?: string;
}

/** Requests to one repository of a registry (see openRepository). */
export interface RegistrySession {
  /** "host/name", how the repository is named in messages. */
  readonly where: string;
  /**
   * Sends `method` to `<base>/v2/<name>/<path>` ("manifests/1.4", "tags/list", "blobs/sha256:…").
   * A 401 is answered once (bearer token or basic credentials) and the request resent; the
   * authorization is kept for later requests. Returns any other response as it is.
   */
  request(method: string, path: string, headers?: Record<string, string>): Promise<Response>;
  /**
   * The SourceError for a non-2xx response to a request about `what`: 401/403 "authentication
   * failed", 404 `notFound`, other 4xx not transient, 408/429/5xx transient.
   */
  statusError(res: Response, what: string, notFound: string): SourceError;
  /** The body of `res`, at most `max` bytes (SourceError, not transient, past that). */
  read(res: Response, max: number, what: string): Promise<Uint8Array>;
  /** Any error thrown while talking to the registry about `what`, as a SourceError without secrets. */
  failure(err: unknown, what: string): SourceError;
}

/**
 * Opens a session with repository `ref` (see parseImageReference). Auth, on a 401: a
 * `Bearer realm=...,service=...,scope=...` challenge → GET the realm with service and scope
 * (repository:<name>:pull when none is given), with HTTP basic credentials (and
 * `account=<username>`, as the Docker CLI sends) when `auth` has some and anonymously otherwise,
 * read `token` (or `access_token`) from the JSON (at most 64 KiB), retry once with
 * `Authorization: Bearer`. A realm must be https (http only when the registry itself is http)
 * and may be on another host, as Docker Hub's is. A `Basic` challenge → retry once with the
 * credentials. Credentials: auth.token → basic as (auth.username or "oauth2accesstoken", token);
 * else (auth.username, auth.password).
 */
export function openRepository(
  ref: ImageReference,
  auth: SourceAuth | undefined,
  options: RegistryOptions = {},
): RegistrySession {
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const timeoutMs = options.timeoutMs ?? 15_000;
  const { host, name } = ref;
  const base = registryBaseUrl(host, options.insecureHosts ?? []);
  const where = `${host}/${name}`;
  const creds = credentials(auth);
  const secrets = [auth?.password, auth?.token].filter((s): s is string => !!s);
  if (creds) secrets.push(basicAuth(creds.user, creds.pass));
  const signal = AbortSignal.timeout(timeoutMs);
  let authorization: string | undefined;

  /** fetch under the deadline (also when an injected fetch ignores the signal). */
  const send = (url: string, method: string, headers: Record<string, string>) =>
    raceSignal(doFetch(url, { method, headers, signal, redirect: "follow" }), signal);

  // Docker Hub answers 401 for a repository that does not exist, as for a private one.
  const authFailed = (status: number) =>
    new SourceError(
      `authentication failed for ${where} (HTTP ${status})${creds ? "" : anonymousHint(options.secretRefField ?? "spec.source.image.secretRef")}`,
      false,
    );

  /** The Authorization header answering the 401 `res`, fetching a bearer token if asked. */
  const authorize = async (res: Response): Promise<string> => {
    const challenges = parseChallenges(res.headers.get("www-authenticate") ?? "");
    const bearer = challenges.find((c) => c.scheme === "bearer");
    if (bearer) {
      const token = await fetchToken(bearer.params);
      secrets.push(token);
      return `Bearer ${token}`;
    }
    if (creds && challenges.some((c) => c.scheme === "basic")) {
      return basicAuth(creds.user, creds.pass);
    }
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
    if (creds) headers["authorization"] = basicAuth(creds.user, creds.pass);
    const res = await send(url.href, "GET", headers);
    const tokenHost = url.host;
    if (res.status !== 200) {
      discard(res);
      if (res.status === 401 || res.status === 403) throw authFailed(res.status);
      throw new SourceError(
        `token service ${tokenHost} answered HTTP ${res.status} for ${where}`,
        transientStatus(res.status),
      );
    }
    const body = await readCapped(res, MAX_TOKEN_BYTES, signal, `token response from ${tokenHost}`);
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder().decode(body));
    } catch {
      throw new SourceError(`token service ${tokenHost} sent a response that is not JSON`, false);
    }
    const fields = (json ?? {}) as { token?: unknown; access_token?: unknown };
    const token =
      typeof fields.token === "string" && fields.token !== "" ? fields.token : fields.access_token;
    if (typeof token !== "string" || token === "") {
      throw new SourceError(`token service ${tokenHost} sent no token for ${where}`, false);
    }
    if (!TOKEN_CHARS.test(token)) {
      throw new SourceError(`token service ${tokenHost} sent a malformed token; refused`, false);
    }
    return token;
  };

  return {
    where,
    async request(method, path, headers = {}) {
      const url = `${base}/v2/${name}/${path}`;
      const withAuth = () => (authorization ? { ...headers, authorization } : { ...headers });
      let res = await send(url, method, withAuth());
      if (res.status === 401) {
        discard(res);
        authorization = await authorize(res);
        res = await send(url, method, withAuth());
      }
      return res;
    },
    statusError(res, what, notFound) {
      const status = res.status;
      if (status === 401 || status === 403) return authFailed(status);
      if (status === 404) return new SourceError(notFound, false);
      return new SourceError(
        `registry ${host} answered HTTP ${status} for ${what}`,
        transientStatus(status),
      );
    },
    read: (res, max, what) => readCapped(res, max, signal, what),
    failure(err, what) {
      if (err instanceof SourceError) return err;
      if (signal.aborted)
        return new SourceError(`timed out after ${timeoutMs} ms reading ${what}`, true);
      return new SourceError(`could not read ${what}: ${scrub(describeError(err), secrets)}`, true);
    },
  };
}

function credentials(auth: SourceAuth | undefined): { user: string; pass: string } | undefined {
  if (auth?.token) return { user: auth.username || REGISTRY_TOKEN_USERNAME, pass: auth.token };
  if (auth?.username || auth?.password) {
    return { user: auth.username ?? "", pass: auth.password ?? "" };
  }
  return undefined;
}
