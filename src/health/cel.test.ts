import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { assessSet } from "./assess.ts";
import { CEL_LIMITS, celHealth, compileExpression, compileHealthChecks } from "./cel.ts";

const now = new Date("2026-01-01T00:00:00Z");

/** A custom resource whose controller reports a phase (as Flux's RFC-0009 examples). */
const widget = (status?: Record<string, unknown>, generation = 1): KubeObject => ({
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name: "w", namespace: "a", generation },
  spec: { size: 1 },
  ...(status ? { status } : {}),
});

const compiled = (checks: Parameters<typeof compileHealthChecks>[0]) => {
  const r = compileHealthChecks(checks);
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.value;
};

const checks = compiled([
  {
    apiVersion: "example.com/v1",
    kind: "Widget",
    inProgress: "has(self.status) && self.status.phase == 'Pending'",
    failed: "has(self.status) && self.status.phase == 'Failed'",
    current: "has(self.status) && self.status.phase == 'Ready'",
  },
]);

describe("celHealth (Flux's healthCheckExprs)", () => {
  it("maps the expression that holds to a health, in Flux's order", () => {
    expect(celHealth(checks, widget({ phase: "Ready" }))).toEqual({
      status: "Healthy",
      message: "healthChecks[0].current holds: has(self.status) && self.status.phase == 'Ready'",
    });
    expect(celHealth(checks, widget({ phase: "Failed" }))?.status).toBe("Degraded");
    expect(celHealth(checks, widget({ phase: "Pending" }))?.status).toBe("Progressing");
  });

  it("checks inProgress before failed, and failed before current", () => {
    const all = compiled([
      {
        apiVersion: "example.com/v1",
        kind: "Widget",
        inProgress: "true",
        failed: "true",
        current: "true",
      },
      { apiVersion: "example.com/v1", kind: "Gadget", failed: "true", current: "true" },
    ]);
    expect(celHealth(all, widget({}))?.status).toBe("Progressing");
    expect(celHealth(all, { ...widget({}), kind: "Gadget" })?.status).toBe("Degraded");
  });

  it("is Progressing while current is given and nothing holds", () => {
    expect(celHealth(checks, widget())).toEqual({
      status: "Progressing",
      message: "waiting for healthChecks[0].current",
    });
  });

  it("leaves the object to the built-in rule when no current is given and nothing holds", () => {
    const failedOnly = compiled([
      { apiVersion: "example.com/v1", kind: "Widget", failed: "status.phase == 'Failed'" },
    ]);
    expect(celHealth(failedOnly, widget({ phase: "Ready" }))).toBeUndefined();
    expect(celHealth(failedOnly, widget({ phase: "Failed" }))?.status).toBe("Degraded");
  });

  it("reads the object's fields as variables too, as Flux does", () => {
    const flux = compiled([
      {
        apiVersion: "example.com/v1",
        kind: "Widget",
        current: "status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True')",
      },
    ]);
    const ready = widget({ conditions: [{ type: "Ready", status: "True" }] });
    expect(celHealth(flux, ready)?.status).toBe("Healthy");
  });

  it("is Progressing while status.observedGeneration is behind metadata.generation", () => {
    expect(celHealth(checks, widget({ phase: "Ready", observedGeneration: 1 }, 2))).toEqual({
      status: "Progressing",
      message: "waiting for the controller to observe generation 2",
    });
  });

  it("matches any version of the group, and nothing else", () => {
    expect(
      celHealth(checks, { ...widget({ phase: "Ready" }), apiVersion: "example.com/v2" })?.status,
    ).toBe("Healthy");
    expect(
      celHealth(checks, { ...widget({ phase: "Ready" }), apiVersion: "other.io/v1" }),
    ).toBeUndefined();
  });

  it("says Unknown, naming the expression, when an evaluation fails or is not a bool", () => {
    const odd = compiled([
      { apiVersion: "example.com/v1", kind: "Widget", current: "self.status.phase == 'Ready'" },
      { apiVersion: "example.com/v1", kind: "Gadget", current: "self.spec.size" },
    ]);
    expect(celHealth(odd, widget())).toEqual({
      status: "Unknown",
      message: `healthChecks[0].current "self.status.phase == 'Ready'" failed: No such key: status`,
    });
    expect(celHealth(odd, { ...widget(), kind: "Gadget" })).toEqual({
      status: "Unknown",
      message: `healthChecks[1].current "self.spec.size" is not a bool`,
    });
  });
});

describe("compileHealthChecks", () => {
  it("refuses an expression that does not parse, naming it and the position", () => {
    const r = compileHealthChecks([
      { apiVersion: "example.com/v1", kind: "Widget", current: "self.status.(" },
    ]);
    expect(r).toEqual({
      ok: false,
      error: [
        {
          code: "InvalidSpec",
          path: "spec.healthChecks[0].current",
          message: `"self.status.(": Expected IDENTIFIER, got LPAREN at position 12`,
        },
      ],
    });
  });

  it("refuses a second check for the same group and kind", () => {
    const r = compileHealthChecks([
      { apiVersion: "example.com/v1", kind: "Widget", current: "true" },
      { apiVersion: "example.com/v2", kind: "Widget", current: "false" },
    ]);
    expect(r.ok ? [] : r.error.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'spec.healthChecks[1]: a second health check for Widget in group "example.com" (the first is healthChecks[0])',
    ]);
  });
});

describe("compileExpression's limits", () => {
  const message = (source: string) => {
    const r = compileExpression(source);
    return r.ok ? "compiled" : r.error;
  };

  it("refuses an expression longer than the limit", () => {
    const long = `self.a == '${"x".repeat(CEL_LIMITS.maxLength)}'`;
    expect(message(long)).toMatch(/is longer than the limit of 1024 characters$/);
  });

  it("refuses a syntax tree beyond the node and depth limits, naming them", () => {
    // A balanced tree of 128 terms: many nodes (383), little depth, under 1024 characters.
    const tree = (from: number, n: number): string =>
      n === 1 ? "a.b" : `(${tree(from, n / 2)}||${tree(from + n / 2, n / 2)})`;
    const many = tree(0, 128);
    expect(message(many)).toMatch(/Exceeded maxAstNodes \(256\) at position \d+$/);
    expect(message(`${"(".repeat(40)}true${")".repeat(40)}`)).toMatch(
      /Exceeded maxDepth \(32\) at position \d+$/,
    );
  });

  it("refuses comprehensions nested in another's body; a chain of them is fine", () => {
    expect(message("self.a.all(x, self.b.exists(y, y == x))")).toBe(
      `"self.a.all(x, self.b.exists(y, y == x))": comprehensions nest 2 deep at position 14, beyond the limit of 1 (an evaluation would cost more than linear time)`,
    );
    expect(message("self.a.filter(c, c.t == 'R').all(c, c.s)")).toBe("compiled");
  });
});

describe("assessSet with health checks", () => {
  it("takes the check's verdict before the built-in rule, and the rule for other kinds", () => {
    const w = widget({ phase: "Failed", conditions: [{ type: "Ready", status: "True" }] });
    const cm: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", namespace: "a" },
    };
    const refs = [
      { apiVersion: "example.com/v1", kind: "Widget", namespace: "a", name: "w" },
      { apiVersion: "v1", kind: "ConfigMap", namespace: "a", name: "c" },
    ];
    const live = new Map([
      ["example.com/Widget/a/w", w],
      ["/ConfigMap/a/c", cm],
    ]);
    expect(assessSet(refs, live, now).status).toBe("Healthy");
    const judged = assessSet(refs, live, now, undefined, checks);
    expect(judged.status).toBe("Degraded");
    expect(judged.byKey.get("/ConfigMap/a/c")?.status).toBe("Healthy");
  });
});
