// A source kind: one of spec.source's fields (git, image, app, chart), as the loop reads it.
import type { AppSpec, SourceKindName } from "../../app/index.ts";
import type { Issue, Result } from "../../core/index.ts";
import type { ParsedObject } from "../../render/index.ts";
import type { RunContext } from "../context.ts";
import type { SourceAuth } from "../ports.ts";

/** spec.source.<K>, validated and defaulted. */
export type SourceSpec<K extends SourceKindName> = NonNullable<AppSpec["source"][K]>;

/**
 * How the loop resolves and renders one kind of source. Shared by every kind (source.ts): the
 * credentials read from `secretRef` (keys `token`, or `username` and `password`) and
 * registered for redaction, the failure a thrown error becomes, and what follows the render
 * (Secrets registered for redaction, discovery of scopes, tracking labels, hashes). How a
 * person sees the source (the web page, /metrics) is its entry in src/app/sources.ts. Adding a
 * kind: its entry in SOURCE_KINDS (src/app/schema.ts), its description there (sources.ts), a
 * file here and its line in SOURCES (index.ts).
 */
export interface SourceKind<K extends SourceKindName> {
  readonly name: K;
  /** The Secret with the source's credentials (spec.source.<K>.secretRef), if any. */
  secretRef(source: SourceSpec<K>): { name: string } | undefined;
  /**
   * The revision the source names now: a commit SHA, a digest, a chart version and digest, an
   * app source's image pins. Throws SourceError (transient unless it says otherwise), or
   * EngineError when the runtime lacks an engine the kind needs.
   */
  resolve(ctx: RunContext, source: SourceSpec<K>, auth: SourceAuth | undefined): Promise<string>;
  /**
   * The objects `revision` renders to, each with its origin (fetched, then rendered: parsing
   * manifests, an engine, a pure renderer); the issues when it does not render. Throws
   * SourceError when the fetch fails.
   */
  render(
    ctx: RunContext,
    spec: AppSpec,
    source: SourceSpec<K>,
    revision: string,
    auth: SourceAuth | undefined,
  ): Promise<Result<ParsedObject[], Issue[]>>;
}
