// ImagePort over the OCI distribution API: resolves repository:tag to a manifest digest with one
// HEAD (plus a GET when the registry leaves out Docker-Content-Digest). Runs in Node and in
// Cloudflare workerd: Web APIs only. Spec:
// https://github.com/opencontainers/distribution-spec/blob/main/spec.md
import { type ImageSource, isTagRange, pickTag } from "../app/index.ts";
import { SourceError } from "../core/errors.ts";
import { hex } from "../core/json.ts";
import type { ImagePort, SourceAuth } from "../reconcile/ports.ts";
import { discard } from "./body.ts";
import {
  checkDigest,
  checkTag,
  type ImageReference,
  parseImageReference,
  type SpecFields,
} from "./oci/reference.ts";
import { openRepository, type RegistryOptions, type RegistrySession } from "./oci/registry.ts";
import { listTags } from "./oci/tags.ts";

export { parseChallenges } from "./oci/challenge.ts";
export { DOCKER_HUB_HOST, parseImageReference, registryBaseUrl } from "./oci/reference.ts";
export { REGISTRY_TOKEN_USERNAME } from "./oci/registry.ts";

/** Media types asked for, in order: multi-arch indexes first, so the digest pins every platform. */
export const MANIFEST_MEDIA_TYPES: readonly string[] = [
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.docker.distribution.manifest.v2+json",
];

const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

/** Options of the image port: those of a registry session (fetch, deadline per resolve, insecure hosts). */
export type ImagePortOptions = RegistryOptions;

/**
 * An ImagePort speaking the OCI distribution API.
 *
 * resolve(source, auth) → "sha256:<64 hex>", the digest of the manifest that source.repository
 * (see parseImageReference) has under source.tag now: `HEAD /v2/<name>/manifests/<tag>` asking
 * for OCI indexes and manifests and Docker manifest lists and v2 manifests (so a multi-arch tag
 * pins its index), the digest read from Docker-Content-Digest; registries that leave that header
 * out get a `GET` and the digest is the sha256 of the body (at most 4 MiB). A digest that is not
 * exactly sha256:<64 lower-case hex> is refused. Auth as in openRepository.
 *
 * Errors are SourceError and never hold credentials or tokens. Not transient: invalid repository
 * or tag, 401/403 after auth ("authentication failed for <host>/<name> (HTTP 401)", plus a hint
 * when no credentials were given), 404 ("image <repository>:<tag> not found"), a bad digest,
 * oversize bodies, hostile or broken token services, other 4xx. Transient: network failures,
 * the deadline (timeoutMs for the whole call), 408, 429 and 5xx.
 *
 * pin(repository, tag, auth) → {tag, digest} for spec.source.app: a tag resolves as above; a
 * semver range (isTagRange) lists the repository's tags (listTags: GET /v2/<name>/tags/list,
 * every page), picks the highest match (pickTag, Flux ImagePolicy's rule) and resolves that
 * tag, in one registry session (one token). No match: SourceError "no tag of … matches".
 */
export function createImagePort(options: ImagePortOptions = {}): ImagePort {
  return {
    async resolve(source: ImageSource, auth: SourceAuth | undefined): Promise<string> {
      const ref = parseImageReference(source.repository);
      const tag = checkTag(source.tag);
      const repo = openRepository(ref, auth, options);
      try {
        return await manifestDigest(repo, ref, source.repository, tag);
      } catch (err) {
        throw repo.failure(err, `${repo.where}:${tag}`);
      }
    },

    async pin(repository, tag, auth) {
      const ref = parseImageReference(repository, APP_FIELDS);
      const repo = openRepository(ref, auth, { ...options, secretRefField: APP_FIELDS.secretRef });
      try {
        let chosen = tag;
        if (isTagRange(tag)) {
          const tags = await listTags(repo, ref.name);
          const picked = pickTag(tag, tags);
          if (picked === undefined) {
            throw new SourceError(
              `no tag of ${repository} matches "${tag}" (${tags.length} tags listed; prereleases count only when the range names one)`,
              false,
            );
          }
          chosen = picked;
        } else {
          checkTag(tag, APP_FIELDS.tag);
        }
        return { tag: chosen, digest: await manifestDigest(repo, ref, repository, chosen) };
      } catch (err) {
        throw repo.failure(err, `${repo.where}:${tag}`);
      }
    },
  };
}

/** How spec.source.app's images are named in messages. */
const APP_FIELDS: SpecFields = {
  repository: "spec.source.app image",
  tag: "spec.source.app tag",
  secretRef: "spec.source.app.secretRef",
};

/** The manifest digest of repository:tag (HEAD, or GET and hash when the header is missing). */
async function manifestDigest(
  repo: RegistrySession,
  ref: ImageReference,
  repository: string,
  tag: string,
): Promise<string> {
  const what = `${ref.name}:${tag}`;
  const notFound = `image ${repository}:${tag} not found`;
  const headers = { accept: MANIFEST_MEDIA_TYPES.join(", ") };
  let res = await repo.request("HEAD", `manifests/${tag}`, headers);
  if (res.status === 200) {
    discard(res);
    const header = res.headers.get("docker-content-digest");
    if (header !== null) return checkDigest(header.trim(), ref.host, what);
  } else if (res.status !== 405 && res.status !== 501) {
    // 405/501: a registry without HEAD support; GET instead.
    discard(res);
    throw repo.statusError(res, what, notFound);
  } else {
    discard(res);
  }
  res = await repo.request("GET", `manifests/${tag}`, headers);
  if (res.status !== 200) {
    discard(res);
    throw repo.statusError(res, what, notFound);
  }
  const body = await repo.read(res, MAX_MANIFEST_BYTES, `manifest ${repo.where}:${tag}`);
  const digest = await crypto.subtle.digest("SHA-256", body as Uint8Array<ArrayBuffer>);
  return `sha256:${hex(new Uint8Array(digest))}`;
}
