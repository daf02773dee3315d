// The engines' wire format: the JSON the Go mains (src/render/engines/<engine>/) read and write.
// Bytes travel as base64 (Go's encoding/json []byte). Web APIs only: used on Node and in workerd.
import {
  EngineError,
  type HelmOutput,
  type HelmRequest,
  type KustomizeRequest,
  type RepoFile,
} from "../engine.ts";

/** Bytes per btoa call: a multiple of 3, so no chunk but the last is padded. */
const CHUNK = 3 * 10_922;

/** Standard base64 of `bytes` (btoa over ~32 KiB chunks: no Buffer in workerd's plain APIs). */
export function toBase64(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += CHUNK) {
    out += btoa(String.fromCharCode(...bytes.subarray(i, i + CHUNK)));
  }
  return out;
}

const wireFiles = (files: readonly RepoFile[]) =>
  files.map((f) => ({ path: f.path, data: toBase64(f.data) }));

/** A KustomizeRequest as the engine's JSON (kustomize/render.go Request). */
export function encodeKustomizeRequest(req: KustomizeRequest): string {
  return JSON.stringify({ ...req, files: wireFiles(req.files) });
}

/** A HelmRequest as the engine's JSON (helm/render.go Request). */
export function encodeHelmRequest(req: HelmRequest): string {
  const { files, archive, valuesFiles, ...rest } = req;
  return JSON.stringify({
    ...rest,
    ...(files ? { files: wireFiles(files) } : {}),
    ...(archive ? { archive: toBase64(archive) } : {}),
    valuesFiles: wireFiles(valuesFiles),
  });
}

function decode(text: string, engine: string): Record<string, unknown> {
  let res: unknown;
  try {
    res = JSON.parse(text);
  } catch {
    throw new EngineError("unavailable", `${engine} engine sent a response that is not JSON`);
  }
  const body = (res ?? {}) as Record<string, unknown>;
  if (body["ok"] !== true) {
    throw new EngineError("failed", String(body["error"] ?? `${engine} engine failed`));
  }
  return body;
}

/** The YAML stream of a Kustomize response; EngineError("failed") with krusty's message. */
export function decodeKustomizeResponse(text: string): string {
  const body = decode(text, "kustomize");
  return typeof body["yaml"] === "string" ? body["yaml"] : "";
}

/** A Helm response; EngineError("failed") with Helm's message (template file and line). */
export function decodeHelmResponse(text: string): HelmOutput {
  const body = decode(text, "helm");
  const manifests = Array.isArray(body["manifests"])
    ? (body["manifests"] as Array<{ path: unknown; content: unknown }>).map((m) => ({
        path: String(m.path),
        content: String(m.content),
      }))
    : [];
  return { chart: String(body["chart"] ?? ""), version: String(body["version"] ?? ""), manifests };
}
