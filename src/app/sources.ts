// How a person sees an App's source: its kind, where it is and what it follows, for the web
// page, /metrics and the CLI. Read leniently from the spec as written (an App whose spec is
// otherwise invalid still shows its source), one entry per source kind (SOURCE_KINDS).
import { SOURCE_KIND_NAMES, type SourceKindName } from "./schema.ts";

/** An App's source as the page and the metrics name it. */
export interface SourceDescription {
  /** The spec.source field set, or "unknown" when none is (or it lacks what it needs). */
  type: SourceKindName | "unknown";
  /** Where it is, without credentials: a repository URL, an image repository, a chart. */
  location: string;
  /** What it follows there: a Git ref, an image tag, a chart version (range). */
  ref: string;
}

type Fields = Record<string, unknown>;

/** What each kind shows, from its spec.source entry; undefined when it lacks its location. */
const DESCRIBE: {
  [K in SourceKindName]: (source: Fields) => Omit<SourceDescription, "type"> | undefined;
} = {
  git: (git) => {
    const url = text(git["url"]);
    return url ? { location: withoutCredentials(url), ref: text(git["ref"]) || "HEAD" } : undefined;
  },
  image: (image) => {
    const repository = text(image["repository"]);
    if (!repository) return undefined;
    return { location: withoutCredentials(repository), ref: text(image["tag"]) || "latest" };
  },
  chart: (chart) => {
    const repository = text(chart["repository"]);
    const name = text(chart["name"]);
    if (!repository || !name) return undefined;
    const location = `${withoutCredentials(repository).replace(/\/+$/, "")}/${name}`;
    return { location, ref: text(chart["version"]) || "*" };
  },
  app: (app) => {
    // Each distinct image its services and jobs name, with the tag (or range) it follows.
    const images = new Map<string, string>();
    for (const w of [...list(app["services"]), ...list(app["jobs"])]) {
      const repository = text(w["image"]);
      if (repository && !images.has(repository)) images.set(repository, text(w["tag"]) || "latest");
    }
    if (images.size === 0) return undefined;
    return {
      location: [...images.keys()].map(withoutCredentials).join(", "),
      ref: [...images.values()].join(", "),
    };
  },
};

/**
 * The source of an App's spec (as written): `{type, location, ref}`, e.g. `{type: "git",
 * location: "https://git.example.com/org/repo.git", ref: "main"}`, `{type: "chart", location:
 * "https://charts.example.com/podinfo", ref: "6.x"}`, `{type: "app", location:
 * "registry.example.com/web, registry.example.com/worker", ref: "^1.2, latest"}`; `{type:
 * "unknown", location: "", ref: ""}` for a spec with no usable source. A URL's user name,
 * password, query and fragment are dropped: a location may carry a token, which must not
 * reach a page or a label.
 */
export function describeSource(spec: unknown): SourceDescription {
  const source = fields(fields(spec)?.["source"]);
  for (const type of SOURCE_KIND_NAMES) {
    const entry = fields(source?.[type]);
    const described = entry && DESCRIBE[type](entry);
    if (described) return { type, ...described };
  }
  return { type: "unknown", location: "", ref: "" };
}

function fields(v: unknown): Fields | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Fields) : undefined;
}

function list(v: unknown): Fields[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((x: unknown): Fields[] => {
    const f = fields(x);
    return f ? [f] : [];
  });
}

function text(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** `location` without a user name, password, query or fragment. */
function withoutCredentials(location: string): string {
  try {
    const url = new URL(location);
    if (!["http:", "https:", "oci:"].includes(url.protocol)) {
      return location.replace(/^[^@/]*@/, "");
    }
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    // Not a URL (an image repository such as registry.example.com/org/web): drop any "user@".
    return location.replace(/^[^@/]*@/, "");
  }
}
