// OCI image references: the distribution spec's grammar for registry hosts, repository names,
// tags and digests, and where a registry is reached.
// Spec: https://github.com/opencontainers/distribution-spec/blob/main/spec.md
import { SourceError } from "../../core/errors.ts";

/** Host that Docker Hub references ("nginx", "org/web", "docker.io/...") are fetched from. */
export const DOCKER_HUB_HOST = "registry-1.docker.io";

/** The spec fields an image reference came from, for messages. */
export interface SpecFields {
  repository: string;
  tag: string;
  secretRef: string;
}
/** The fields of spec.source.image. */
export const IMAGE_FIELDS: SpecFields = {
  repository: "spec.source.image.repository",
  tag: "spec.source.image.tag",
  secretRef: "spec.source.image.secretRef",
};
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
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);
const MAX_REPOSITORY_LENGTH = 255;

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
 * spec does not allow in a name. `fields` name the spec fields in messages (the image source's
 * by default; spec.source.app's services name their own).
 */
export function parseImageReference(
  repository: string,
  fields: SpecFields = IMAGE_FIELDS,
): ImageReference {
  const FIELD = fields.repository;
  const quoted = JSON.stringify(
    repository.length > 100 ? `${repository.slice(0, 100)}…` : repository,
  );
  const invalid = (why: string) => new SourceError(`invalid ${FIELD} ${quoted}: ${why}`, false);
  if (repository.includes("@")) {
    const at = repository.lastIndexOf("@");
    if (DIGEST_SUFFIX.test(repository)) {
      const bare = JSON.stringify(repository.slice(0, at));
      throw new SourceError(
        `invalid ${FIELD} ${bare}@…: it holds a digest; give the repository alone and the tag in ${fields.tag}`,
        false,
      );
    }
    // Possibly "user:password@host/...": never echo it.
    throw new SourceError(
      `invalid ${FIELD}: it must not contain "@" (put registry credentials in ${fields.secretRef})`,
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
    throw invalid(`it holds a tag; give the repository alone and the tag in ${fields.tag}`);
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
 * `tag` if it matches the distribution spec's tag grammar; otherwise throws SourceError (not
 * transient) naming `field` and quoting at most 140 characters of the tag.
 */
export function checkTag(tag: string, field = "spec.source.image.tag"): string {
  if (TAG.test(tag)) return tag;
  const shown = JSON.stringify(tag.length > 140 ? `${tag.slice(0, 140)}…` : tag);
  throw new SourceError(
    `invalid ${field} ${shown}: a tag matches [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`,
    false,
  );
}

/** `digest` if it is exactly sha256:<64 lower-case hex>; otherwise SourceError (not transient). */
export function checkDigest(digest: string, host: string, what: string): string {
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
