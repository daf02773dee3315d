// Helm chart repositories over HTTP(S): index.yaml, version pick, .tgz download with the
// digest the index gives. https://helm.sh/docs/topics/chart_repository/
import { parse } from "yaml";
import type { ChartSource } from "../app/index.ts";
import { SourceError, transientStatus } from "../core/errors.ts";
import type { SourceAuth } from "../reconcile/ports.ts";
import { discard, readCapped } from "./body.ts";
import { authorizationFor, secretsOf, sha256Digest } from "./chart-http.ts";
import { chartRevision, parseChartRevision, pickVersion } from "./chart-version.ts";
import { describeError, displayUrl, scrub } from "./http.ts";

export interface HelmRepositoryOptions {
  fetch: typeof fetch;
  timeoutMs: number;
  /** Cap on index.yaml, bytes. */
  maxIndexBytes: number;
  /** Cap on a packaged chart, bytes. */
  maxChartBytes: number;
}

interface IndexEntry {
  version: string;
  digest?: string;
  urls: string[];
}

/** index.yaml parsed: the entries of one chart. */
type Index = Map<string, IndexEntry[]>;

/**
 * A Helm HTTP repository client. resolve reads `<repository>/index.yaml`, picks the highest
 * version of `name` that `version` allows (pickVersion) and returns "<version>@sha256:<digest>"
 * with the digest the index lists (a chart whose entry has none is downloaded and hashed).
 * download fetches the entry's first URL (relative URLs resolve against the repository) and
 * checks its sha256 against the revision. Credentials (auth) go to the repository's origin
 * only, as Helm does without --pass-credentials. Errors are SourceError: 401/403, 404, no
 * matching version, digest mismatch, oversize bodies (not transient); network, deadline, 408,
 * 429, 5xx (transient). Messages never hold credentials or URL userinfo.
 */
export function helmRepository(o: HelmRepositoryOptions) {
  async function get(
    url: URL,
    origin: string,
    auth: SourceAuth | undefined,
    max: number,
    what: string,
  ) {
    const headers: Record<string, string> = {};
    const authorization = authorizationFor(auth);
    if (authorization && url.origin === origin) headers["authorization"] = authorization;
    const shown = displayUrl(url.href);
    const signal = AbortSignal.timeout(o.timeoutMs);
    let res: Response;
    try {
      res = await o.fetch(url.href, { headers, redirect: "follow", signal });
    } catch (err) {
      if (signal.aborted) {
        throw new SourceError(`timed out after ${o.timeoutMs} ms reading ${shown}`, true);
      }
      throw new SourceError(
        `could not read ${shown}: ${scrub(describeError(err), secretsOf(auth))}`,
        true,
      );
    }
    if (res.status === 401 || res.status === 403) {
      discard(res);
      throw new SourceError(
        `authentication failed for ${shown} (HTTP ${res.status})${auth ? "" : ": no credentials were given (spec.source.chart.secretRef)"}`,
        false,
      );
    }
    if (res.status !== 200) {
      discard(res);
      throw new SourceError(`${shown} answered HTTP ${res.status}`, transientStatus(res.status));
    }
    return readCapped(res, max, signal, what);
  }

  function base(source: ChartSource): URL {
    try {
      const url = new URL(source.repository);
      if (url.username || url.password) {
        throw new SourceError(
          `spec.source.chart.repository must not hold credentials (use spec.source.chart.secretRef)`,
          false,
        );
      }
      return url;
    } catch (err) {
      if (err instanceof SourceError) throw err;
      throw new SourceError(`invalid chart repository URL ${displayUrl(source.repository)}`, false);
    }
  }

  async function readIndex(
    source: ChartSource,
    auth: SourceAuth | undefined,
  ): Promise<IndexEntry[]> {
    const root = base(source);
    const url = resolveInRepository(root, "index.yaml");
    const shown = displayUrl(url.href);
    const body = await get(url, root.origin, auth, o.maxIndexBytes, shown);
    const index = parseIndex(new TextDecoder().decode(body), shown);
    const entries = index.get(source.name);
    if (!entries || entries.length === 0) {
      throw new SourceError(`chart "${source.name}" not found in ${shown}`, false);
    }
    return entries;
  }

  function pick(entries: IndexEntry[], source: ChartSource): IndexEntry {
    const version = pickVersion(
      entries.map((e) => e.version),
      source.version,
    );
    const entry = entries.find((e) => e.version === version);
    if (!entry) {
      throw new SourceError(
        `no version of chart "${source.name}" matches "${source.version}" in ${displayUrl(source.repository)}`,
        false,
      );
    }
    return entry;
  }

  async function download(source: ChartSource, entry: IndexEntry, auth: SourceAuth | undefined) {
    const root = base(source);
    const first = entry.urls[0];
    if (!first) {
      throw new SourceError(`chart ${source.name} ${entry.version} has no URL in the index`, false);
    }
    let url: URL;
    try {
      url = resolveInRepository(root, first);
    } catch {
      throw new SourceError(`chart ${source.name} ${entry.version} has an invalid URL`, false);
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      throw new SourceError(
        `chart ${source.name} ${entry.version}: URL scheme ${url.protocol} refused`,
        false,
      );
    }
    return get(url, root.origin, auth, o.maxChartBytes, `chart ${source.name} ${entry.version}`);
  }

  return {
    async resolve(source: ChartSource, auth: SourceAuth | undefined): Promise<string> {
      const entry = pick(await readIndex(source, auth), source);
      if (entry.digest) return chartRevision(entry.version, `sha256:${entry.digest}`);
      const tgz = await download(source, entry, auth);
      return chartRevision(entry.version, await sha256Digest(tgz));
    },

    async fetch(
      source: ChartSource,
      revision: string,
      auth: SourceAuth | undefined,
    ): Promise<Uint8Array> {
      const { version, digest } = parseChartRevision(revision);
      const entries = await readIndex(source, auth);
      const entry = entries.find((e) => e.version === version);
      if (!entry) {
        throw new SourceError(
          `chart ${source.name} ${version} is no longer in ${displayUrl(source.repository)}`,
          false,
        );
      }
      const tgz = await download(source, entry, auth);
      const got = await sha256Digest(tgz);
      if (got !== digest) {
        throw new SourceError(
          `chart ${source.name} ${version}: downloaded digest ${got} differs from ${digest} (the repository's index)`,
          false,
        );
      }
      return tgz;
    },
  };
}

/**
 * `ref` (index.yaml, or a chart's URL from the index) resolved against the repository URL as
 * Helm does (pkg/repo ResolveReferenceURL): an absolute URL as is; a relative one against the
 * repository's path taken as a directory (a missing trailing "/" added, so
 * http://host/charts and http://host/charts/ both give http://host/charts/index.yaml), with
 * the repository's query (a token some repositories take there) kept, on the repository's own
 * origin only (a protocol-relative "//other-host/x" does not get it).
 * @throws TypeError when `ref` does not parse
 */
export function resolveInRepository(repository: URL, ref: string): URL {
  const absolute = parseUrl(ref);
  if (absolute) return absolute;
  const dir = new URL(repository.href);
  if (!dir.pathname.endsWith("/")) dir.pathname = `${dir.pathname}/`;
  const url = new URL(ref, dir);
  if (url.origin === dir.origin) url.search = dir.search;
  return url;
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** index.yaml → entries by chart name (entries without a version or URLs are dropped). */
export function parseIndex(text: string, where: string): Index {
  let doc: unknown;
  try {
    doc = parse(text, { maxAliasCount: 100 });
  } catch (err) {
    throw new SourceError(
      `${where} is not valid YAML: ${describeError(err).split("\n")[0]}`,
      false,
    );
  }
  const entries = (doc as { entries?: unknown } | null)?.entries;
  if (typeof entries !== "object" || entries === null) {
    throw new SourceError(`${where} has no entries (not a Helm repository index)`, false);
  }
  const out: Index = new Map();
  for (const [name, list] of Object.entries(entries as Record<string, unknown>)) {
    if (!Array.isArray(list)) continue;
    const good: IndexEntry[] = [];
    for (const item of list as Array<Record<string, unknown>>) {
      const version = item?.["version"];
      const urls = item?.["urls"];
      const digest = item?.["digest"];
      if (typeof version !== "string" || !Array.isArray(urls)) continue;
      const entry: IndexEntry = {
        version,
        urls: urls.filter((u): u is string => typeof u === "string"),
      };
      if (typeof digest === "string" && /^[0-9a-f]{64}$/.test(digest)) entry.digest = digest;
      good.push(entry);
    }
    out.set(name, good);
  }
  return out;
}
