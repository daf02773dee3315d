import { describe, expect, it } from "vitest";
import { EngineError } from "../engine.ts";
import {
  decodeHelmResponse,
  decodeKustomizeResponse,
  encodeHelmRequest,
  toBase64,
} from "./wire.ts";

describe("engine wire format", () => {
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

  it("turns an engine's error into EngineError(failed) with its message", () => {
    expect(decodeKustomizeResponse('{"ok":true,"yaml":"a: 1\\n"}')).toBe("a: 1\n");
    const err = (() => {
      try {
        decodeHelmResponse('{"ok":false,"error":"template: web/templates/x.yaml:3:4: boom"}');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({
      kind: "failed",
      message: "template: web/templates/x.yaml:3:4: boom",
    });
    expect(() => decodeKustomizeResponse("<html>")).toThrow(/not JSON/);
  });
});
