// The source kinds, one entry per field of spec.source (SOURCE_KINDS).
import { type AppSpec, SOURCE_KIND_NAMES, type SourceKindName } from "../../app/index.ts";
import { app } from "./app.ts";
import { chart } from "./chart.ts";
import { git } from "./git.ts";
import { image } from "./image.ts";
import type { SourceKind } from "./kind.ts";

export type { SourceKind, SourceSpec } from "./kind.ts";

export const SOURCES: { readonly [K in SourceKindName]: SourceKind<K> } = {
  git,
  image,
  app,
  chart,
};

/** The kind of source a validated spec sets (validateSpec ensures exactly one), or undefined. */
export function kindOf(spec: AppSpec): SourceKindName | undefined {
  return SOURCE_KIND_NAMES.find((name) => spec.source[name] !== undefined);
}
