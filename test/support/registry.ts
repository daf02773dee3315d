// A real OCI registry for tests, just enough of the distribution API to resolve and list tags and
// pull Helm charts: node:http on 127.0.0.1 serving /v2/, HEAD and GET
// /v2/<name>/manifests/<tag|digest>, GET /v2/<name>/blobs/<digest>, GET /v2/<name>/tags/list (n,
// last and a Link header, as distribution pages), and (bearer mode) a Docker token-auth endpoint
// at /token. Manifests and blobs live in memory; push() replaces a tag.
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** The `service` the bearer challenge names and the token endpoint expects. */
export const REGISTRY_SERVICE = "plumb-test-registry";

/** Digest the test registry sends with `badDigest` (upper-case hex, too short: malformed). */
export const BAD_DIGEST = "sha256:ABCDEF0123";

export interface RegistryOptions {
  /**
   * "none" (default): anonymous. "basic": manifests need HTTP basic `username`:`password`
   * (401 with `WWW-Authenticate: Basic` otherwise). "bearer": manifests need a token from /token
   * for their repository (401 with a Bearer challenge naming realm, service and scope); /token
   * checks HTTP basic `username`:`password` when `username` is given and is anonymous otherwise.
   */
  auth?: "none" | "bearer" | "basic";
  username?: string;
  password?: string;
  /** Leave Docker-Content-Digest out of manifest responses (as some registries do). */
  omitDigestHeader?: boolean;
  /** Send BAD_DIGEST as Docker-Content-Digest, as a hostile registry might. */
  badDigest?: boolean;
  /** JSON field /token puts the token in (default "token"; "access_token" is the OAuth2 name). */
  tokenField?: "token" | "access_token";
  /** Most tags per tags/list page, whatever `n` asks (distribution's own cap); default 1000. */
  maxPageSize?: number;
  /** Write Link URLs absolute, with this origin (a registry behind a proxy might). */
  linkOrigin?: string;
}

/** A fault injected into every following request until cleared: a status, or never answering. */
export type RegistryFault = number | "hang" | undefined;

export interface TestRegistry {
  /** "127.0.0.1:<port>", the registry part of an image reference. */
  host: string;
  /** "http://127.0.0.1:<port>" (no trailing slash). */
  url: string;
  /**
   * Stores `manifest` under name:tag (moving the tag if it exists), served as its JSON.stringify
   * bytes with its `mediaType` (default OCI image manifest) as Content-Type.
   * @returns the manifest's digest, "sha256:<hex>" of those bytes.
   */
  push(name: string, tag: string, manifest: object): string;
  /** Stores a blob of `name`; returns its digest ("sha256:<hex>"). */
  pushBlob(name: string, bytes: Uint8Array): string;
  /** Requests served so far, as "METHOD /path?query". */
  requests: string[];
  /** Makes every request answer `fault` (a status) or hang ("hang"); undefined clears it. */
  setFault(fault: RegistryFault): void;
  /** Closes the server and any hanging requests. */
  stop(): Promise<void>;
}

interface Stored {
  bytes: Buffer;
  digest: string;
  mediaType: string;
}

const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const MANIFEST_PATH = /^\/v2\/(.+)\/manifests\/([^/]+)$/;
const BLOB_PATH = /^\/v2\/(.+)\/blobs\/(sha256:[0-9a-f]{64})$/;
const TAGS_PATH = /^\/v2\/(.+)\/tags\/list$/;

/** Starts a registry on 127.0.0.1 with a random port. */
export async function startRegistry(options: RegistryOptions = {}): Promise<TestRegistry> {
  const mode = options.auth ?? "none";
  const expectedBasic = `${options.username ?? ""}:${options.password ?? ""}`;
  const tags = new Map<string, Map<string, Stored>>();
  const byDigest = new Map<string, Map<string, Stored>>();
  const blobs = new Map<string, Map<string, Buffer>>();
  /** Issued bearer token → repository name it grants pull on. */
  const tokens = new Map<string, string>();
  const requests: string[] = [];
  const hanging = new Set<ServerResponse>();
  let fault: RegistryFault;
  let url = "";

  const basicOk = (req: IncomingMessage): boolean => {
    const header = req.headers.authorization ?? "";
    if (!header.startsWith("Basic ")) return false;
    return Buffer.from(header.slice(6), "base64").toString("utf8") === expectedBasic;
  };

  const error = (res: ServerResponse, status: number, code: string, extra = {}) => {
    const body = JSON.stringify({ errors: [{ code, message: code.toLowerCase(), detail: null }] });
    res
      .writeHead(status, {
        "content-type": "application/json",
        "docker-distribution-api-version": "registry/2.0",
        ...extra,
      })
      .end(body);
  };

  /** Whether `req` may read `name`; answers 401 (with the challenge) when not. */
  const authorized = (req: IncomingMessage, res: ServerResponse, name: string): boolean => {
    if (mode === "basic") {
      if (basicOk(req)) return true;
      error(res, 401, "UNAUTHORIZED", { "www-authenticate": 'Basic realm="plumb-test-registry"' });
      return false;
    }
    if (mode === "bearer") {
      const header = req.headers.authorization ?? "";
      const granted = header.startsWith("Bearer ") ? tokens.get(header.slice(7)) : undefined;
      if (granted !== undefined && (name === "" || granted === name)) return true;
      const scope = name === "" ? "" : `,scope="repository:${name}:pull"`;
      error(res, 401, "UNAUTHORIZED", {
        "www-authenticate": `Bearer realm="${url}/token",service="${REGISTRY_SERVICE}"${scope}`,
      });
      return false;
    }
    return true;
  };

  const token = (req: IncomingMessage, res: ServerResponse, query: URLSearchParams) => {
    if (options.username !== undefined && !basicOk(req)) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"details":"denied"}');
      return;
    }
    if (query.get("service") !== REGISTRY_SERVICE) {
      res.writeHead(400, { "content-type": "application/json" }).end('{"details":"service"}');
      return;
    }
    const scope = /^repository:([^:]+):pull$/.exec(query.get("scope") ?? "");
    const issued = randomBytes(24).toString("hex");
    tokens.set(issued, scope?.[1] ?? "");
    const field = options.tokenField ?? "token";
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(
        JSON.stringify({ [field]: issued, expires_in: 300, issued_at: new Date().toISOString() }),
      );
  };

  const manifest = (req: IncomingMessage, res: ServerResponse, name: string, ref: string) => {
    if (!authorized(req, res, name)) return;
    const stored = ref.startsWith("sha256:")
      ? byDigest.get(name)?.get(ref)
      : tags.get(name)?.get(ref);
    if (!stored) {
      error(res, 404, tags.has(name) ? "MANIFEST_UNKNOWN" : "NAME_UNKNOWN");
      return;
    }
    // Content negotiation as in distribution: a type the client does not accept is not served.
    const accept = String(req.headers.accept ?? "")
      .split(",")
      .map((t) => t.split(";")[0]?.trim() ?? "");
    if (!accept.includes(stored.mediaType) && !accept.includes("*/*")) {
      error(res, 404, "MANIFEST_UNKNOWN");
      return;
    }
    const headers: Record<string, string> = {
      "content-type": stored.mediaType,
      "content-length": String(stored.bytes.length),
      "docker-distribution-api-version": "registry/2.0",
    };
    if (options.badDigest) headers["docker-content-digest"] = BAD_DIGEST;
    else if (!options.omitDigestHeader) headers["docker-content-digest"] = stored.digest;
    res.writeHead(200, headers);
    res.end(req.method === "HEAD" ? undefined : stored.bytes);
  };

  /** distribution's tag pagination: sorted tags after `last`, at most `n`, Link to the next page. */
  const tagList = (req: IncomingMessage, res: ServerResponse, name: string, q: URLSearchParams) => {
    if (!authorized(req, res, name)) return;
    const stored = tags.get(name);
    if (!stored) {
      error(res, 404, "NAME_UNKNOWN");
      return;
    }
    const cap = options.maxPageSize ?? 1000;
    const n = Math.min(Number(q.get("n") ?? cap) || cap, cap);
    const last = q.get("last");
    const all = [...stored.keys()].sort().filter((t) => last === null || t > last);
    const page = all.slice(0, n);
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (all.length > page.length) {
      const next = `/v2/${name}/tags/list?n=${n}&last=${encodeURIComponent(page.at(-1) ?? "")}`;
      headers["link"] = `<${options.linkOrigin ?? ""}${next}>; rel="next"`;
    }
    res.writeHead(200, headers).end(JSON.stringify({ name, tags: page }));
  };

  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (fault === "hang") {
      hanging.add(res);
      return;
    }
    if (fault !== undefined) {
      error(res, fault, "INJECTED");
      return;
    }
    const u = new URL(req.url ?? "/", url);
    if (req.method !== "GET" && req.method !== "HEAD") {
      error(res, 405, "UNSUPPORTED");
      return;
    }
    if (u.pathname === "/token" && mode === "bearer") {
      token(req, res, u.searchParams);
      return;
    }
    if (u.pathname === "/v2/" || u.pathname === "/v2") {
      if (authorized(req, res, ""))
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      return;
    }
    const t = TAGS_PATH.exec(u.pathname);
    if (t?.[1] && req.method === "GET") {
      tagList(req, res, t[1], u.searchParams);
      return;
    }
    const m = MANIFEST_PATH.exec(u.pathname);
    if (m?.[1] && m[2]) {
      manifest(req, res, m[1], m[2]);
      return;
    }
    const b = BLOB_PATH.exec(u.pathname);
    if (b?.[1] && b[2]) {
      if (!authorized(req, res, b[1])) return;
      const blob = blobs.get(b[1])?.get(b[2]);
      if (!blob) error(res, 404, "BLOB_UNKNOWN");
      else
        res
          .writeHead(200, {
            "content-type": "application/octet-stream",
            "content-length": String(blob.length),
            "docker-content-digest": b[2],
          })
          .end(req.method === "HEAD" ? undefined : blob);
      return;
    }
    error(res, 404, "NOT_FOUND");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  url = `http://${host}`;

  return {
    host,
    url,
    requests,
    push(name, tag, body) {
      const bytes = Buffer.from(JSON.stringify(body));
      const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
      const mediaType =
        typeof (body as { mediaType?: unknown }).mediaType === "string"
          ? (body as { mediaType: string }).mediaType
          : OCI_MANIFEST;
      const stored: Stored = { bytes, digest, mediaType };
      if (!tags.has(name)) tags.set(name, new Map());
      if (!byDigest.has(name)) byDigest.set(name, new Map());
      tags.get(name)?.set(tag, stored);
      byDigest.get(name)?.set(digest, stored);
      return digest;
    },
    pushBlob(name, bytes) {
      const buf = Buffer.from(bytes);
      const digest = `sha256:${createHash("sha256").update(buf).digest("hex")}`;
      if (!blobs.has(name)) blobs.set(name, new Map());
      blobs.get(name)?.set(digest, buf);
      return digest;
    },
    setFault(f) {
      fault = f;
    },
    async stop() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
