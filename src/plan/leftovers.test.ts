import { describe, expect, it } from "vitest";
import { validateSpec } from "../app/index.ts";
import { GateReason, type ObjectRef } from "../core/index.ts";
import type { Decision } from "./gates.ts";
import { retryLeftovers } from "./leftovers.ts";

const cm = (name: string): ObjectRef => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  namespace: "a",
  name,
});
const R = "r".repeat(40);
const upToDate: Decision = { action: "none", reason: GateReason.UpToDate };

function spec(syncPolicy: Record<string, unknown> = {}) {
  const v = validateSpec({ source: { git: { url: "https://git.example/r.git" } }, syncPolicy });
  if (!v.ok) throw new Error("spec");
  return v.value;
}

const input = (over: Partial<Parameters<typeof retryLeftovers>[0]> = {}) => ({
  decision: upToDate,
  spec: spec(),
  revision: R,
  inventory: [cm("one"), cm("two")],
  desired: [cm("one")],
  departed: 0,
  ...over,
});

describe("retryLeftovers", () => {
  it("an up-to-date App whose inventory lists an object the render lacks syncs again", () => {
    expect(retryLeftovers(input())).toEqual({
      action: "apply",
      revision: R,
      reason: GateReason.Automated,
    });
  });

  it("objects on a former destination sync again too", () => {
    expect(retryLeftovers(input({ inventory: [cm("one")], departed: 2 }))).toMatchObject({
      action: "apply",
    });
  });

  it("nothing left over: the decision stands", () => {
    expect(retryLeftovers(input({ inventory: [cm("one")] }))).toBe(upToDate);
  });

  it("prune off, manual sync or frozen: the leftovers stay on purpose", () => {
    expect(retryLeftovers(input({ spec: spec({ prune: false }) }))).toBe(upToDate);
    expect(retryLeftovers(input({ spec: spec({ automated: false }) }))).toBe(upToDate);
    expect(retryLeftovers(input({ spec: { ...spec(), freeze: true } }))).toBe(upToDate);
  });

  it("a sync window that blocks, or any other decision, stands", () => {
    const blocked: Decision = {
      action: "none",
      reason: GateReason.UpToDate,
      window: { blocking: [], cause: "deny", message: "deny window open" },
    };
    expect(retryLeftovers(input({ decision: blocked }))).toBe(blocked);
    const stalled: Decision = { action: "none", reason: GateReason.ApplyStalled };
    expect(retryLeftovers(input({ decision: stalled }))).toBe(stalled);
    const held: Decision = { action: "hold", revision: R, reason: GateReason.RequiresApproval };
    expect(retryLeftovers(input({ decision: held }))).toBe(held);
  });
});
