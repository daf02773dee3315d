// The source kinds, one entry per field of spec.source (SOURCE_KINDS).
import type { AppSpec, SourceKindName } from "../../app/index.ts";
import { app } from "./app.ts";
import { chart } from "./chart.ts";
import { git } from "./git.ts";
import { image } from "./image.ts";
import type { SourceKind, SourceSpec } from "./kind.ts";

export type { SourceKind, SourceSpec } from "./kind.ts";

export const SOURCES: { readonly [K in SourceKindName]: SourceKind<K> } = {
  git,
  image,
  app,
  chart,
};

/** The kind of a validated spec's source and its entry (exactly one is set). */
export type SourceOf = {
  [K in SourceKindName]: { kind: SourceKind<K>; source: SourceSpec<K> };
}[SourceKindName];

/** The source a validated spec sets (validateSpec ensures exactly one), or undefined. */
export function sourceOf(spec: AppSpec): SourceOf | undefined {
  for (const name of Object.keys(SOURCES) as SourceKindName[]) {
    const source = spec.source[name];
    if (source !== undefined) return { kind: SOURCES[name], source } as SourceOf;
  }
  return undefined;
}
