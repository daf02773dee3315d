import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  EngineError,
  type HelmRequest,
  type KustomizeRequest,
  type RepoFile,
} from "../render/engine.ts";
import {
  decodeHelmResponse,
  decodeKustomizeResponse,
  encodeHelmRequest,
  encodeKustomizeRequest,
  HelmRequestWire,
  HelmResponseWire,
  HelperMessage,
  HostMessage,
  KustomizeRequestWire,
  KustomizeResponseWire,
  toBase64,
  wireJsonSchema,
} from "./wire.ts";

const HERE = import.meta.dirname;

/** The cases the Go tests run too (src/engines/testdata/<engine>/*.json). */
function cases(engine: "kustomize" | "helm") {
  const dir = join(HERE, "testdata", engine);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => ({
      name: f.replace(/\.json$/, ""),
      ...(JSON.parse(readFileSync(join(dir, f), "utf8")) as {
        request: Record<string, unknown>;
        response: Record<string, unknown>;
      }),
    }));
}

type WireFile = { path: string; data: string };
const fromWire = (files: WireFile[] | undefined): RepoFile[] | undefined =>
  files?.map((f) => ({ path: f.path, data: new Uint8Array(Buffer.from(f.data, "base64")) }));

const failure = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error("did not throw");
};

describe("engine wire format", () => {
  it("wire.schema.json is what wire.ts defines (regenerate it with npm run generate)", () => {
    const file = JSON.parse(readFileSync(join(HERE, "wire.schema.json"), "utf8"));
    expect(file).toEqual(wireJsonSchema());
    expect(Object.keys(file.$defs)).toEqual([
      "File",
      "KustomizeRequest",
      "KustomizeResponse",
      "HelmRequest",
      "HelmResponse",
      "EngineFailure",
      "HostMessage",
      "HelperMessage",
    ]);
  });

  describe.each(cases("kustomize"))("Kustomize case $name (as the Go test runs it)", (c) => {
    it("the request is the schema's, and what encodeKustomizeRequest writes for it", () => {
      const wire = KustomizeRequestWire.parse(c.request);
      // A field the case leaves out stays out (maxOutputBytes is optional on the wire).
      const request = { ...wire, files: fromWire(wire.files)! } as KustomizeRequest;
      expect(JSON.parse(encodeKustomizeRequest(request))).toEqual(c.request);
      expect(HostMessage.safeParse({ id: 1, request: c.request }).success).toBe(true);
    });

    it("the engine's response decodes to its objects or to EngineError(failed) with its message", () => {
      const wire = KustomizeResponseWire.parse(c.response);
      expect(HelperMessage.safeParse({ id: 1, response: c.response }).success).toBe(true);
      if (wire.ok) {
        expect(decodeKustomizeResponse(c.response)).toEqual({ objects: wire.objects });
        expect(decodeKustomizeResponse(JSON.stringify(c.response))).toEqual({
          objects: wire.objects,
        });
        expect(wire.objects?.length).toBeGreaterThan(0);
      } else {
        const err = failure(() => decodeKustomizeResponse(c.response));
        expect(err).toBeInstanceOf(EngineError);
        expect(err).toMatchObject({ kind: "failed", message: wire.error, transient: false });
      }
    });
  });

  describe.each(cases("helm"))("Helm case $name (as the Go test runs it)", (c) => {
    it("the request is the schema's, and what encodeHelmRequest writes for it", () => {
      const wire = HelmRequestWire.parse(c.request);
      const { files, archive, valuesFiles, valuesFrom, ...rest } = wire;
      const request = { ...rest, valuesFiles: fromWire(valuesFiles) ?? [] } as HelmRequest;
      if (files) request.files = fromWire(files)!;
      if (valuesFrom) {
        request.valuesFrom = valuesFrom.map((v) => ({
          ...v,
          data: new Uint8Array(Buffer.from(v.data, "base64")),
        }));
      }
      if (archive) request.archive = new Uint8Array(Buffer.from(archive, "base64"));
      expect(JSON.parse(encodeHelmRequest(request))).toEqual(c.request);
      expect(HostMessage.safeParse({ id: 1, request: c.request }).success).toBe(true);
    });

    it("the engine's response decodes to the rendered templates or to EngineError(failed)", () => {
      const wire = HelmResponseWire.parse(c.response);
      if (wire.ok) {
        expect(decodeHelmResponse(c.response)).toEqual({
          chart: wire.chart,
          version: wire.version,
          manifests: wire.manifests ?? [],
          ...(wire.lookups ? { lookups: wire.lookups } : {}),
        });
      } else {
        expect(failure(() => decodeHelmResponse(c.response))).toMatchObject({
          kind: "failed",
          message: wire.error,
        });
      }
    });
  });

  it("base64 matches Node's for every byte and for chunked lengths", () => {
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 7) % 256);
    expect(toBase64(bytes)).toBe(Buffer.from(bytes).toString("base64"));
    expect(toBase64(new Uint8Array())).toBe("");
  });

  it("encodes a Helm request with bytes as base64 and no absent fields", () => {
    const json = JSON.parse(
      encodeHelmRequest({
        archive: new Uint8Array([1, 2, 3]),
        valuesFiles: [{ path: "v.yaml", data: new TextEncoder().encode("a: 1") }],
        releaseName: "r",
        namespace: "n",
        maxOutputBytes: 5,
      }),
    );
    expect(json).toEqual({
      archive: "AQID",
      valuesFiles: [{ path: "v.yaml", data: "YTogMQ==" }],
      releaseName: "r",
      namespace: "n",
      maxOutputBytes: 5,
    });
  });

  it("a response that is not JSON, or of another shape, is EngineError(unavailable): transient, says to rebuild", () => {
    expect(failure(() => decodeKustomizeResponse("<html>"))).toMatchObject({
      kind: "unavailable",
      message: "the Kustomize engine sent a response that is not JSON",
      transient: true,
    });
    expect(failure(() => decodeHelmResponse({ ok: true, manifests: [{ path: 1 }] }))).toMatchObject(
      {
        kind: "unavailable",
        message:
          "the Helm engine sent a response of another shape (manifests.0.path: Invalid input: expected string, received number); rebuild it: npm run build:engines",
      },
    );
    // A field a newer engine adds is ignored.
    const objects = [{ line: 1, object: { kind: "ConfigMap" } }];
    expect(decodeKustomizeResponse({ ok: true, objects, took: 3 })).toEqual({ objects });
  });
});
