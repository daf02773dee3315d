// Kustomize sources: a repository tree and spec.source.kustomize to the engine's request, and
// its output back to parsed objects. The engine itself is injected (RenderEngines).
import type { KustomizeOverrides } from "../app/index.ts";
import type { Issue, Result } from "../core/index.ts";
import type { KustomizeRequest, RepoFile } from "./engine.ts";
import { type ParsedObject, parseManifests } from "./manifests.ts";

/** Names of a kustomization file, in kustomize's order (konfig.RecognizedKustomizationFileNames). */
export const KUSTOMIZATION_FILES: readonly string[] = [
  "kustomization.yaml",
  "kustomization.yml",
  "Kustomization",
];

/**
 * The request that builds the kustomization in `path` (relative to the repository root) over
 * every file of the repository, with the App's overrides (images replace an entry of the same
 * name; patches are appended), the output capped at `maxOutputBytes`.
 */
export function kustomizeRequest(
  files: RepoFile[],
  path: string,
  overrides: KustomizeOverrides | undefined,
  maxOutputBytes: number,
): KustomizeRequest {
  const request: KustomizeRequest = { files, path, maxOutputBytes };
  if (overrides?.images?.length) request.images = overrides.images;
  if (overrides?.patches?.length) request.patches = overrides.patches;
  return request;
}

/**
 * Parses what `kustomize build` printed. Objects' origins read "kustomize build <path>:<line>"
 * (line in the output stream).
 */
export function parseKustomizeOutput(path: string, yaml: string): Result<ParsedObject[], Issue[]> {
  return parseManifests([{ path: `kustomize build ${path === "" ? "." : path}`, content: yaml }]);
}
