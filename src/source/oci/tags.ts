// Tag listing over the OCI distribution API: GET /v2/<name>/tags/list, page by page through
// the Link header (`n` and `last`), on a registry session.
// Spec: https://github.com/opencontainers/distribution-spec/blob/main/spec.md#listing-tags
import { SourceError } from "../../core/errors.ts";
import { discard } from "../body.ts";
import type { RegistrySession } from "./registry.ts";

/** Tags asked for per page (registries may answer fewer; distribution caps at its own max). */
export const TAGS_PAGE_SIZE = 1000;
/** Pages followed at most: past this the list is refused rather than read in part. */
export const MAX_TAG_PAGES = 100;
const MAX_PAGE_BYTES = 4 * 1024 * 1024;
const TAG = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;

export interface TagListOptions {
  pageSize?: number;
  maxPages?: number;
}

/**
 * Every tag of the session's repository, in the registry's order. Follows `Link: <…>;
 * rel="next"` (relative or absolute; only its path and query are used, sent to this registry,
 * and the path must stay under /v2/<name>/tags/list). Names that are not valid tags are skipped.
 * Throws SourceError: 404 "repository <host/name> not found", auth and status errors as
 * session.statusError, a page over 4 MiB or not JSON, a Link elsewhere or back to a page
 * already read, and a list longer than maxPages pages (a part of a list could pick the wrong
 * version, so none is returned).
 */
export async function listTags(
  repo: RegistrySession,
  name: string,
  options: TagListOptions = {},
): Promise<string[]> {
  const pageSize = options.pageSize ?? TAGS_PAGE_SIZE;
  const maxPages = options.maxPages ?? MAX_TAG_PAGES;
  const what = `tags of ${repo.where}`;
  const prefix = `/v2/${name}/`;
  const seen = new Set<string>();
  const tags: string[] = [];
  let path: string | undefined = `tags/list?n=${pageSize}`;
  for (let page = 0; path !== undefined; page++) {
    if (page >= maxPages) {
      throw new SourceError(
        `${repo.where} has more than ${maxPages} pages of tags; refusing a partial list`,
        false,
      );
    }
    seen.add(path);
    const res = await repo.request("GET", path, { accept: "application/json" });
    if (res.status !== 200) {
      discard(res);
      throw repo.statusError(res, what, `repository ${repo.where} not found`);
    }
    const link = res.headers.get("link");
    const body = await repo.read(res, MAX_PAGE_BYTES, what);
    tags.push(...pageTags(body, repo.where));
    path = link === null ? undefined : nextPath(link, prefix, repo.where);
    if (path !== undefined && seen.has(path)) {
      throw new SourceError(`${repo.where} sent a tags Link back to a page already read`, false);
    }
  }
  return tags;
}

function pageTags(body: Uint8Array, where: string): string[] {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new SourceError(`${where} sent a tag list that is not JSON`, false);
  }
  const list = (json as { tags?: unknown } | null)?.tags;
  // distribution answers `"tags": null` for a repository without tags.
  if (list === null || list === undefined) return [];
  if (!Array.isArray(list)) throw new SourceError(`${where} sent a tag list without tags`, false);
  return list.filter((t): t is string => typeof t === "string" && TAG.test(t));
}

/**
 * The session path ("tags/list?…") of the `rel="next"` link in a Link header (RFC 8288), or
 * undefined when there is none.
 */
export function nextPath(header: string, prefix: string, where: string): string | undefined {
  for (const part of header.split(",")) {
    const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (!m || !/(^|;)\s*rel\s*=\s*"?next"?\s*(;|$)/i.test(m[2] ?? "")) continue;
    let url: URL;
    try {
      url = new URL(m[1] ?? "", "http://registry.invalid");
    } catch {
      throw new SourceError(`${where} sent a malformed tags Link`, false);
    }
    if (url.pathname !== `${prefix}tags/list`) {
      throw new SourceError(`${where} sent a tags Link outside its tag list; refused`, false);
    }
    return `${url.pathname.slice(prefix.length)}${url.search}`;
  }
  return undefined;
}
