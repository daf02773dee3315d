// The engines' wire format, defined once: the JSON the Go engines (src/engines/<engine>/) read
// and write, and the envelopes of the helper protocol on Node (src/engines/protocol/). The zod
// schemas below are the definition; wire.schema.json is generated from them (wire.test.ts
// fails when it is stale and says how to regenerate it), and the Go tests check the Go types
// against that file. Bytes travel as base64 (Go's encoding/json []byte). Web APIs only: used
// on Node and in workerd.
//
// Extending it: a new optional field is ignored by a peer that does not know it (Go's
// encoding/json drops unknown fields; the decoders below strip them), so a per-request limit
// or a callback from the helper (Helm's lookup: a helper message with the request's id and a
// call, answered by a host message) can be added without breaking either side.
import { z } from "zod";
import {
  EngineError,
  type HelmOutput,
  type HelmRequest,
  type KustomizeOutput,
  type KustomizeRequest,
  type RepoFile,
} from "../render/engine.ts";

/** The protocol version a helper must announce in its ready message. */
export const PROTOCOL_VERSION = 1;

const count = z.int().min(0);

const WireFile = z
  .strictObject({
    path: z.string().describe("Path from the repository's (or chart's) root, /-separated."),
    data: z.base64().describe("The file's bytes, base64."),
  })
  .describe("One file of a repository or chart.");

const KustomizeImage = z.strictObject({
  name: z.string(),
  newName: z.string().optional(),
  newTag: z.string().optional(),
  digest: z.string().optional(),
});

const KustomizePatch = z.strictObject({
  patch: z.string(),
  target: z
    .strictObject({
      group: z.string().optional(),
      version: z.string().optional(),
      kind: z.string().optional(),
      name: z.string().optional(),
      namespace: z.string().optional(),
      labelSelector: z.string().optional(),
      annotationSelector: z.string().optional(),
    })
    .optional(),
});

export const KustomizeRequestWire = z
  .strictObject({
    files: z.array(WireFile),
    path: z.string().describe('The kustomization directory from the repository root ("" = root).'),
    images: z.array(KustomizeImage).optional(),
    patches: z.array(KustomizePatch).optional(),
    maxOutputBytes: count.optional().describe("Cap on the rendered YAML, bytes (absent: none)."),
  })
  .describe("One `kustomize build` (kustomize/render.go Request).");

export const KustomizeResponseWire = z
  .object({
    ok: z.boolean(),
    objects: z
      .array(
        z.object({
          line: z.int().min(1).describe("Where its document starts in `kustomize build`'s output."),
          object: z.record(z.string(), z.unknown()),
        }),
      )
      .optional()
      .describe("The output's resources in order, each decoded as kubectl decodes the YAML."),
    error: z.string().optional().describe("krusty's message, when not ok."),
  })
  .describe("kustomize/render.go Response.");

const LookupKeyWire = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  namespace: z.string(),
  name: z.string().describe('"" asks for a list.'),
});

export const HelmRequestWire = z
  .strictObject({
    files: z.array(WireFile).optional().describe("A chart directory's files, or..."),
    archive: z.base64().optional().describe("...a packaged chart (.tgz), base64."),
    valuesFiles: z.array(WireFile).optional(),
    chartValuesFiles: z.array(z.string()).optional(),
    values: z.record(z.string(), z.unknown()).optional(),
    valuesFrom: z
      .array(
        z.strictObject({
          source: z.string().describe('For messages: "ConfigMap team/web key values.yaml".'),
          data: z.base64(),
          targetPath: z.string().optional(),
          secret: z.boolean().optional(),
        }),
      )
      .optional()
      .describe("spec.source.helm.valuesFrom as read, merged in order before values."),
    releaseName: z.string(),
    namespace: z.string(),
    kubeVersion: z.string().optional(),
    apiVersions: z.array(z.string()).optional(),
    maxOutputBytes: count.optional(),
    lookup: z
      .boolean()
      .optional()
      .describe("Answer `lookup` from lookups (off: it returns nothing)."),
    lookups: z
      .array(
        z.strictObject({
          ...LookupKeyWire.shape,
          object: z.record(z.string(), z.unknown()).optional().describe("Absent: none."),
        }),
      )
      .optional()
      .describe("The host's answers to the lookups an earlier pass listed."),
  })
  .describe("One `helm template --include-crds` (helm/render.go Request).");

export const HelmResponseWire = z
  .object({
    ok: z.boolean(),
    chart: z.string().optional(),
    version: z.string().optional(),
    manifests: z.array(z.object({ path: z.string(), content: z.string() })).optional(),
    lookups: z
      .array(LookupKeyWire)
      .optional()
      .describe("Lookups the request did not answer: the host answers them and renders again."),
    error: z.string().optional(),
  })
  .describe("helm/render.go Response.");

/** What every engine answers when it could not render (protocol.Failure). */
export const EngineFailureWire = z.object({ ok: z.boolean(), error: z.string() });

/** Host → helper: one line per render (protocol.Request). */
export const HostMessage = z
  .strictObject({
    id: z.int().min(1),
    request: z.union([KustomizeRequestWire, HelmRequestWire]),
  })
  .describe("Host to helper, one JSON line per render.");

/** Helper → host: the ready line once, then one response line per request (protocol.Message). */
export const HelperMessage = z
  .union([
    z.object({
      ready: z.object({ engine: z.string(), protocol: z.int() }),
    }),
    z.object({
      id: z.int().min(0),
      response: z.union([KustomizeResponseWire, HelmResponseWire, EngineFailureWire]),
    }),
  ])
  .describe("Helper to host, one JSON line each: ready once, then one response per request.");

/** Every definition of the wire, by the name wire.schema.json gives it. */
export const WIRE_SCHEMAS = {
  File: WireFile,
  KustomizeRequest: KustomizeRequestWire,
  KustomizeResponse: KustomizeResponseWire,
  HelmRequest: HelmRequestWire,
  HelmResponse: HelmResponseWire,
  EngineFailure: EngineFailureWire,
  HostMessage,
  HelperMessage,
} as const;

/** wire.schema.json's content: the definitions as JSON Schema (draft 2020-12) under $defs. */
export function wireJsonSchema(): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(WIRE_SCHEMAS)) registry.add(schema, { id });
  const out = z.toJSONSchema(registry, {
    target: "draft-2020-12",
    uri: (id) => `#/$defs/${id}`,
  }) as { schemas: Record<string, Record<string, unknown>> };
  const defs: Record<string, unknown> = {};
  for (const [id, def] of Object.entries(out.schemas)) {
    const { $schema: _s, $id: _i, ...rest } = def;
    defs[id] = rest;
  }
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $comment:
      "Generated from src/engines/wire.ts (npm run generate); the Go tests check the engines' types against it.",
    $defs: defs,
  };
}

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

/** A KustomizeRequest as the engine's JSON (KustomizeRequestWire); absent fields are left out. */
export function encodeKustomizeRequest(req: KustomizeRequest): string {
  return JSON.stringify({ ...req, files: wireFiles(req.files) });
}

/** A HelmRequest as the engine's JSON (HelmRequestWire); absent fields are left out. */
export function encodeHelmRequest(req: HelmRequest): string {
  const { files, archive, valuesFiles, valuesFrom, ...rest } = req;
  return JSON.stringify({
    ...rest,
    ...(files ? { files: wireFiles(files) } : {}),
    ...(archive ? { archive: toBase64(archive) } : {}),
    valuesFiles: wireFiles(valuesFiles),
    ...(valuesFrom
      ? { valuesFrom: valuesFrom.map((v) => ({ ...v, data: toBase64(v.data) })) }
      : {}),
  });
}

/**
 * A response checked against its schema: `response` is the JSON text (from the render Worker)
 * or the parsed value (from a helper's message). EngineError("failed") with the engine's own
 * message when it did not render; EngineError("unavailable") when it answered something else.
 */
function decodeResponse<T extends { ok: boolean; error?: string | undefined }>(
  response: unknown,
  engine: string,
  schema: z.ZodType<T>,
): T {
  let json = response;
  if (typeof response === "string") {
    try {
      json = JSON.parse(response);
    } catch {
      throw new EngineError("unavailable", `the ${engine} engine sent a response that is not JSON`);
    }
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new EngineError(
      "unavailable",
      `the ${engine} engine sent a response of another shape (${issue?.path.join(".") || "response"}: ${issue?.message}); rebuild it: npm run build:engines`,
    );
  }
  if (!parsed.data.ok) {
    throw new EngineError("failed", parsed.data.error || `the ${engine} engine failed`);
  }
  return parsed.data;
}

/** The objects of a Kustomize response (see decodeResponse). */
export function decodeKustomizeResponse(response: unknown): KustomizeOutput {
  return { objects: decodeResponse(response, "Kustomize", KustomizeResponseWire).objects ?? [] };
}

/** A Helm response (see decodeResponse); Helm's errors name the template file and line. */
export function decodeHelmResponse(response: unknown): HelmOutput {
  const body = decodeResponse(response, "Helm", HelmResponseWire);
  return {
    chart: body.chart ?? "",
    version: body.version ?? "",
    manifests: body.manifests ?? [],
    ...(body.lookups?.length ? { lookups: body.lookups } : {}),
  };
}
