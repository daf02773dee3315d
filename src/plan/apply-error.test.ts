import { describe, expect, it } from "vitest";
import { KubeApiError } from "../core/index.ts";
import { readApplyError } from "./apply-error.ts";

const invalid = (causes: Array<{ reason?: string; message?: string; field?: string }>) =>
  new KubeApiError(422, "Invalid", 'PATCH /x: Job.batch "j" is invalid: ...', causes);

describe("readApplyError", () => {
  it.each<[string, unknown, ReturnType<typeof readApplyError>]>([
    [
      "an immutable field: short, terminal, names the field and the opt-in",
      invalid([
        { reason: "FieldValueInvalid", message: "field is immutable", field: "spec.template" },
      ]),
      {
        message:
          'spec.template is immutable; set the annotation plumb.dev/recreate: "true" on it to delete and recreate it',
        terminal: true,
        immutable: ["spec.template"],
      },
    ],
    [
      "a StatefulSet's forbidden update is immutable too",
      invalid([
        {
          reason: "FieldValueForbidden",
          message:
            "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
          field: "spec",
        },
      ]),
      {
        message:
          'spec is immutable; set the annotation plumb.dev/recreate: "true" on it to delete and recreate it',
        terminal: true,
        immutable: ["spec"],
      },
    ],
    [
      "two immutable fields",
      invalid([
        { message: "field is immutable", field: "spec.selector" },
        { message: "field is immutable", field: "spec.template" },
      ]),
      {
        message:
          'spec.selector, spec.template are immutable; set the annotation plumb.dev/recreate: "true" on it to delete and recreate it',
        terminal: true,
        immutable: ["spec.selector", "spec.template"],
      },
    ],
    [
      "another invalid value: terminal, with its fields",
      invalid([
        {
          message: "Invalid value: -1: must be between 1 and 65535, inclusive",
          field: "spec.ports[0].port",
        },
      ]),
      {
        message:
          "invalid: spec.ports[0].port: Invalid value: -1: must be between 1 and 65535, inclusive",
        terminal: true,
        immutable: [],
      },
    ],
    [
      "a manifest that does not fit the schema (a 500 from server-side apply): terminal",
      new KubeApiError(
        500,
        "Unknown",
        "PATCH /x: failed to create typed patch object (a/b; /v1, Kind=ConfigMap): .foo: field not declared in schema",
      ),
      {
        message:
          "PATCH /x: failed to create typed patch object (a/b; /v1, Kind=ConfigMap): .foo: field not declared in schema",
        terminal: true,
        immutable: [],
      },
    ],
    [
      "bad base64 in a Secret's data (a 500 converting the object): terminal",
      new KubeApiError(
        500,
        "Unknown",
        "PATCH /x: failed to convert new object (a/b; /v1, Kind=ConfigMap) to proper version: unable to convert unstructured object to /v1, Kind=ConfigMap: error decoding from json: illegal base64 data at input byte 4",
      ),
      {
        message:
          "PATCH /x: failed to convert new object (a/b; /v1, Kind=ConfigMap) to proper version: unable to convert unstructured object to /v1, Kind=ConfigMap: error decoding from json: illegal base64 data at input byte 4",
        terminal: true,
        immutable: [],
      },
    ],
    [
      "a 500 with a Status reason (the server's own trouble, e.g. etcd): retried",
      new KubeApiError(
        500,
        "InternalError",
        "PATCH /x: Internal error occurred: failed to create typed patch object: etcdserver: request timed out",
      ),
      {
        message:
          "PATCH /x: Internal error occurred: failed to create typed patch object: etcdserver: request timed out",
        terminal: false,
        immutable: [],
      },
    ],
    [
      "a conflict or an outage: retried",
      new KubeApiError(503, "ServiceUnavailable", "kubernetes API unreachable"),
      { message: "kubernetes API unreachable", terminal: false, immutable: [] },
    ],
    ["not an API error", new Error("boom"), { message: "boom", terminal: false, immutable: [] }],
  ])("%s", (_name, error, expected) => {
    expect(readApplyError(error)).toEqual(expected);
  });

  it("keeps none of the API server's words for a Secret (they may quote its data)", () => {
    const schema = new KubeApiError(
      500,
      "Unknown",
      "PATCH /x: failed to create typed patch object: .data.token: expected string, got &value.valueUnstructured{Value:hunter2}",
    );
    expect(readApplyError(schema, { secret: true })).toEqual({
      message: "HTTP 500 Unknown",
      terminal: true,
      immutable: [],
    });
    const refused = invalid([
      { message: 'Invalid value: "hunter2": must be valid JSON', field: "data[.dockerconfigjson]" },
    ]);
    const read = readApplyError(refused, { secret: true });
    expect(read).toEqual({
      message: "HTTP 422 Invalid: data[.dockerconfigjson]",
      terminal: true,
      immutable: [],
    });
    expect(JSON.stringify(read)).not.toContain("hunter2");
  });

  it("with the run's redactor, a Secret's error keeps the API server's words, values redacted", () => {
    const schema = new KubeApiError(
      500,
      "Unknown",
      "PATCH /x: failed to create typed patch object: .stringData.token: expected string, got &value.valueUnstructured{Value:8675309123}",
    );
    const redact = (text: string) => text.replaceAll("8675309123", "[redacted]");
    expect(readApplyError(schema, { secret: true, redact })).toEqual({
      message:
        "PATCH /x: failed to create typed patch object: .stringData.token: expected string, got &value.valueUnstructured{Value:[redacted]}",
      terminal: true,
      immutable: [],
    });
  });
});
