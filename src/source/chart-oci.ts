// Helm charts in OCI registries (helm push oci://...): the tag list for ranges, the manifest, the
// chart layer — through the same registry session as image sources (oci/registry.ts).
// https://helm.sh/docs/topics/registries/ and the OCI distribution spec.
import type { ChartSource } from "../app/index.ts";
import { SourceError } from "../core/errors.ts";
import type { SourceAuth } from "../reconcile/ports.ts";
import { discard } from "./body.ts";
import { sha256Digest } from "./chart-http.ts";
import { chartRevision, parseChartRevision, pickVersion } from "./chart-version.ts";
import { parseImageReference } from "./oci/reference.ts";
import { openRepository, type RegistrySession } from "./oci/registry.ts";

export const HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
const LEGACY_CHART_LAYER = "application/tar+gzip";
const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
const MAX_TAG_PAGES = 20;
const EXACT = /^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?$/;

export interface OciChartOptions {
  fetch: typeof fetch;
  timeoutMs: number;
  maxChartBytes: number;
  insecureHosts: readonly string[];
}

/**
 * An OCI chart client: `oci://host/path` + name is the repository host/path/name. resolve picks
 * the tag (an exact version is used as is, "+" written "_" as Helm does; a range lists the
 * tags, following Link pagination) and returns "<version>@<manifest digest>"; fetch reads that
 * manifest by digest, checks it, and downloads the chart layer, checking its digest. Auth and
 * errors as in openRepository (SourceError, never holding credentials or tokens).
 */
export function ociCharts(o: OciChartOptions) {
  const open = (source: ChartSource, auth: SourceAuth | undefined) => {
    const path = source.repository.replace(/^oci:\/\//, "").replace(/\/+$/, "");
    return openRepository(parseImageReference(`${path}/${source.name}`), auth, {
      fetch: o.fetch,
      timeoutMs: o.timeoutMs,
      insecureHosts: o.insecureHosts,
    });
  };

  /** GET `path` of the repository; a non-200 is the session's SourceError. */
  async function get(
    repo: RegistrySession,
    path: string,
    accept: string,
    max: number,
    what: string,
  ): Promise<{ body: Uint8Array; link: string | null }> {
    const res = await repo.request("GET", path, { accept });
    if (res.status !== 200) {
      discard(res);
      throw repo.statusError(res, what, `${what} not found in ${repo.where}`);
    }
    return { body: await repo.read(res, max, what), link: res.headers.get("link") };
  }

  async function tags(repo: RegistrySession): Promise<string[]> {
    const out: string[] = [];
    let path: string | undefined = "tags/list";
    for (let page = 0; path && page < MAX_TAG_PAGES; page++) {
      const { body, link } = await get(
        repo,
        path,
        "application/json",
        MAX_MANIFEST_BYTES,
        "tag list",
      );
      const list = JSON.parse(new TextDecoder().decode(body)) as { tags?: unknown };
      if (Array.isArray(list.tags)) {
        out.push(...list.tags.filter((t): t is string => typeof t === "string"));
      }
      path = nextPage(link);
    }
    return out;
  }

  return {
    async resolve(source: ChartSource, auth: SourceAuth | undefined): Promise<string> {
      const repo = open(source, auth);
      try {
        const wanted = source.version.trim();
        const version = EXACT.test(wanted)
          ? wanted
          : pickVersion(
              (await tags(repo)).map((t) => t.replace(/_/g, "+")),
              source.version,
            );
        if (!version) {
          throw new SourceError(
            `no version of chart ${repo.where} matches "${source.version}"`,
            false,
          );
        }
        const tag = version.replace(/\+/g, "_");
        const { body } = await get(
          repo,
          `manifests/${tag}`,
          OCI_MANIFEST,
          MAX_MANIFEST_BYTES,
          `chart version ${version}`,
        );
        return chartRevision(version, await sha256Digest(body));
      } catch (err) {
        throw repo.failure(err, `chart ${repo.where}`);
      }
    },

    async fetch(source: ChartSource, revision: string, auth: SourceAuth | undefined) {
      const { version, digest } = parseChartRevision(revision);
      const repo = open(source, auth);
      try {
        const { body } = await get(
          repo,
          `manifests/${digest}`,
          OCI_MANIFEST,
          MAX_MANIFEST_BYTES,
          `chart ${version} (${digest})`,
        );
        if ((await sha256Digest(body)) !== digest) {
          throw new SourceError(
            `manifest of chart ${repo.where} ${version} does not match ${digest}`,
            false,
          );
        }
        let manifest: { layers?: Array<{ mediaType?: string; digest?: string }> };
        try {
          manifest = JSON.parse(new TextDecoder().decode(body));
        } catch {
          throw new SourceError(`manifest of chart ${repo.where} ${version} is not JSON`, false);
        }
        const layer = (manifest.layers ?? []).find(
          (l) => l.mediaType === HELM_CHART_LAYER || l.mediaType === LEGACY_CHART_LAYER,
        );
        if (!layer?.digest || !/^sha256:[0-9a-f]{64}$/.test(layer.digest)) {
          throw new SourceError(
            `${repo.where}:${version} is not a Helm chart (no ${HELM_CHART_LAYER} layer)`,
            false,
          );
        }
        const tgz = (
          await get(repo, `blobs/${layer.digest}`, "*/*", o.maxChartBytes, `chart ${version} layer`)
        ).body;
        if ((await sha256Digest(tgz)) !== layer.digest) {
          throw new SourceError(
            `chart layer of ${repo.where} ${version} does not match ${layer.digest}`,
            false,
          );
        }
        return tgz;
      } catch (err) {
        throw repo.failure(err, `chart ${repo.where}`);
      }
    },
  };
}

/** The path (under /v2/<name>/) of a `Link: <...>; rel="next"` header, if any. */
function nextPage(header: string | null): string | undefined {
  const m = header?.match(/<([^>]+)>\s*;\s*rel="?next"?/);
  if (!m?.[1]) return undefined;
  const at = m[1].indexOf("/tags/list");
  return at < 0 ? undefined : m[1].slice(at + 1);
}
