// Kustomize sources: a repository tree and spec.source.kustomize to the engine's request, and
// its output back to parsed objects. The engine itself is injected (RenderEngines).
import type { KustomizeOverrides } from "../app/index.ts";
import type { Issue, Result } from "../core/index.ts";
import type { KustomizeOutput, KustomizeRequest, RepoFile } from "./engine.ts";
import { decodedObjects, type ParsedObject } from "./manifests.ts";

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
 * The objects of a Kustomize build (decoded by the engine as kubectl decodes `kustomize
 * build`'s YAML), checked as manifests are. Origins read "kustomize build <path>:<line>" (the
 * line of the object's document in the output stream).
 */
export function parseKustomizeOutput(
  path: string,
  output: KustomizeOutput,
): Result<ParsedObject[], Issue[]> {
  const where = `kustomize build ${path === "" ? "." : path}`;
  return decodedObjects(
    output.objects.map((o) => ({ origin: `${where}:${o.line}`, value: o.object })),
  );
}
