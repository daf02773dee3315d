import { describe, expect, it } from "vitest";
import { shortCause, toError } from "./request.ts";

// The shape of the API server's answer to a Job whose template changed (message cut here; the
// real one is 2,001 characters, the internal object dumped twice).
const dump = `{"labels":{"job-name":"j1"},"Spec":{"Volumes":null,"Containers":[{"Name":"m","Image":"busybox:2"${',"X":null'.repeat(80)}}]}}`;
const immutable = {
  status: 422,
  body: {
    kind: "Status",
    status: "Failure",
    message: `Job.batch "j1" is invalid: spec.template: Invalid value: ${dump}: field is immutable`,
    reason: "Invalid",
    details: {
      name: "j1",
      group: "batch",
      kind: "Job",
      causes: [
        {
          reason: "FieldValueInvalid",
          message: `Invalid value: ${dump}: field is immutable`,
          field: "spec.template",
        },
      ],
    },
    code: 422,
  },
};

describe("toError", () => {
  it("rebuilds a 422's message from its causes, without the refused value's dump", () => {
    const err = toError(immutable, "PATCH /apis/batch/v1/namespaces/a/jobs/j1");
    expect(err.message).toBe(
      'PATCH /apis/batch/v1/namespaces/a/jobs/j1: Job.batch "j1" is invalid: spec.template: field is immutable',
    );
    expect(err.status).toBe(422);
    expect(err.reason).toBe("Invalid");
    expect(err.causes).toEqual([
      { reason: "FieldValueInvalid", message: "field is immutable", field: "spec.template" },
    ]);
  });

  it("keeps short causes whole and caps any message at 500 characters", () => {
    const ports = toError(
      {
        status: 422,
        body: {
          message:
            'Service "bad" is invalid: [spec.ports[0].port: Invalid value: -1: must be between 1 and 65535, inclusive]',
          reason: "Invalid",
          details: {
            causes: [
              {
                reason: "FieldValueInvalid",
                message: "Invalid value: -1: must be between 1 and 65535, inclusive",
                field: "spec.ports[0].port",
              },
            ],
          },
        },
      },
      "apply",
    );
    expect(ports.message).toBe(
      'apply: Service "bad" is invalid: spec.ports[0].port: Invalid value: -1: must be between 1 and 65535, inclusive',
    );
    const long = toError({ status: 500, body: { message: "x".repeat(3000) } }, "get");
    expect(long.message.length).toBeLessThanOrEqual(505);
    expect(long.causes).toEqual([]);
  });
});

describe("shortCause", () => {
  it.each([
    ["field is immutable", "field is immutable"],
    [`Invalid value: ${dump}: field is immutable`, "field is immutable"],
    ["Required value", "Required value"],
    [`Unsupported value: "${"y".repeat(300)}"`, `Unsupported value: "${"y".repeat(139)}…`],
  ])("%#", (message, expected) => {
    expect(shortCause(message)).toBe(expected);
  });
});
