// Helm charts for tests: packaging a chart as `helm package` lays it out (<name>/... in a
// gzipped tar), and a real Helm HTTP repository (index.yaml + .tgz files) on 127.0.0.1 that
// records what it was asked and can require basic auth.
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { stringify } from "yaml";

/** A ustar archive of `files` (path → content), gzipped. */
export function tgz(files: Record<string, string | Uint8Array>): Uint8Array {
  const blocks: Buffer[] = [];
  for (const [path, content] of Object.entries(files)) {
    const data = typeof content === "string" ? Buffer.from(content) : Buffer.from(content);
    if (Buffer.byteLength(path) > 100) throw new Error(`tar name too long: ${path}`);
    const header = Buffer.alloc(512);
    header.write(path, 0, "utf8");
    header.write("0000644\0", 100);
    header.write("0000000\0", 108);
    header.write("0000000\0", 116);
    header.write(`${data.length.toString(8).padStart(11, "0")}\0`, 124);
    header.write(
      `${Math.floor(Date.UTC(2026, 0, 1) / 1000)
        .toString(8)
        .padStart(11, "0")}\0`,
      136,
    );
    header.write("        ", 148);
    header.write("0", 156);
    header.write("ustar\0", 257);
    header.write("00", 263);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return new Uint8Array(gzipSync(Buffer.concat(blocks)));
}

/** A chart packaged as `helm package` would: every file under "<name>/". */
export function packageChart(name: string, files: Record<string, string>): Uint8Array {
  return tgz(Object.fromEntries(Object.entries(files).map(([p, c]) => [`${name}/${p}`, c])));
}

export interface HelmRepoChart {
  name: string;
  version: string;
  files: Record<string, string>;
  /** Publish this digest in index.yaml instead of the real one (a tampered index). */
  digest?: string;
}

export interface HelmRepo {
  /** http://127.0.0.1:<port>[<prefix>] (no trailing slash). */
  url: string;
  /** Requests served, as "METHOD /path" (and " auth" when an Authorization header came). */
  requests: string[];
  /** Adds or replaces a chart version and rewrites index.yaml. */
  add(chart: HelmRepoChart): void;
  stop(): Promise<void>;
}

/**
 * Serves index.yaml (apiVersion v1, entries with version, digest and a relative URL
 * charts/<name>-<version>.tgz) and the archives, under `prefix` (e.g. "/charts/stable": a
 * repository that is not at the server's root). With `basic`, every request needs it; with
 * `token`, every request needs the query `?token=<token>` (a token in the repository URL).
 */
export async function startHelmRepo(
  options: { basic?: string; prefix?: string; token?: string } = {},
): Promise<HelmRepo> {
  const prefix = options.prefix ?? "";
  const archives = new Map<string, Uint8Array>();
  const entries = new Map<string, Array<Record<string, unknown>>>();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}${req.headers.authorization ? " auth" : ""}`);
    if (options.basic) {
      const want = `Basic ${Buffer.from(options.basic).toString("base64")}`;
      if (req.headers.authorization !== want) {
        res.writeHead(401, { "www-authenticate": 'Basic realm="charts"' }).end();
        return;
      }
    }
    const url = new URL(req.url ?? "/", "http://repo");
    if (options.token !== undefined && url.searchParams.get("token") !== options.token) {
      res.writeHead(403).end();
      return;
    }
    if (url.pathname === `${prefix}/index.yaml`) {
      const index = {
        apiVersion: "v1",
        entries: Object.fromEntries(entries),
        generated: "2026-01-01T00:00:00Z",
      };
      res.writeHead(200, { "content-type": "application/x-yaml" }).end(stringify(index));
      return;
    }
    const archive = archives.get(url.pathname);
    if (!archive) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/gzip" }).end(archive);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`,
    requests,
    add(chart) {
      const archive = packageChart(chart.name, chart.files);
      const file = `charts/${chart.name}-${chart.version}.tgz`;
      archives.set(`${prefix}/${file}`, archive);
      const list = (entries.get(chart.name) ?? []).filter((e) => e["version"] !== chart.version);
      list.push({
        apiVersion: "v2",
        name: chart.name,
        version: chart.version,
        digest: chart.digest ?? createHash("sha256").update(archive).digest("hex"),
        urls: [file],
      });
      entries.set(chart.name, list);
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
