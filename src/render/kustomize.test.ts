import { describe, expect, it } from "vitest";
import { kustomizeRequest, parseKustomizeOutput } from "./kustomize.ts";

describe("Kustomize output", () => {
  it("each decoded object keeps the line of its document in the build's output as its origin", () => {
    const r = parseKustomizeOutput("deploy/overlays/dev", {
      objects: [
        { line: 1, object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } } },
        {
          line: 9,
          object: {
            apiVersion: "v1",
            kind: "List",
            items: [{ apiVersion: "v1", kind: "Secret", metadata: { name: "b" } }],
          },
        },
      ],
    });
    expect(r).toEqual({
      ok: true,
      value: [
        {
          origin: "kustomize build deploy/overlays/dev:1",
          object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } },
        },
        {
          origin: "kustomize build deploy/overlays/dev:9",
          object: { apiVersion: "v1", kind: "Secret", metadata: { name: "b" } },
        },
      ],
    });
  });

  it("an object without a name fails the whole render, naming its line", () => {
    expect(
      parseKustomizeOutput("", {
        objects: [
          { line: 1, object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } } },
          { line: 6, object: { apiVersion: "v1", kind: "ConfigMap", metadata: {} } },
        ],
      }),
    ).toEqual({
      ok: false,
      error: [
        {
          code: "InvalidManifest",
          path: "kustomize build .:6",
          message: "ConfigMap: metadata.name is missing (generateName is not supported)",
        },
      ],
    });
  });

  it("the request carries the App's overrides only when it has some", () => {
    expect(kustomizeRequest([], "app", undefined, 10)).toEqual({
      files: [],
      path: "app",
      maxOutputBytes: 10,
    });
    expect(
      kustomizeRequest([], "app", { images: [{ name: "nginx", newTag: "1.27" }], patches: [] }, 10),
    ).toEqual({
      files: [],
      path: "app",
      maxOutputBytes: 10,
      images: [{ name: "nginx", newTag: "1.27" }],
    });
  });
});
