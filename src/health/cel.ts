// spec.healthChecks: CEL expressions that judge the health of a kind plumb has no rule for,
// as Flux's healthCheckExprs (RFC-0009; fluxcd/pkg runtime/cel/status_evaluator.go). Compiled
// once per run (compileHealthChecks), evaluated per live object (celHealth). Pure.
import { Environment, type ParseError } from "@marcbachmann/cel-js";
import type { HealthStatus } from "../app/schema.ts";
import { err, groupOf, type Issue, type KubeObject, ok, type Result } from "../core/index.ts";
import { type HealthResult, result } from "./util.ts";

/** One spec.healthChecks entry as the spec gives it. */
export interface HealthCheckSpec {
  apiVersion: string;
  kind: string;
  current?: string | undefined;
  inProgress?: string | undefined;
  failed?: string | undefined;
}

/**
 * What bounds one expression's cost, checked when it is compiled: its length, its syntax tree
 * (nodes and depth, the library's parse limits) and how deep comprehensions (all, exists,
 * exists_one, map, filter) nest inside each other's bodies — with none nested in another, an
 * evaluation takes time linear in the object's size.
 */
export const CEL_LIMITS = {
  maxLength: 1024,
  maxAstNodes: 256,
  maxDepth: 32,
  maxListElements: 64,
  maxMapEntries: 64,
  maxCallArguments: 8,
  maxComprehensionNesting: 1,
} as const;

const COMPREHENSIONS = new Set(["all", "exists", "exists_one", "map", "filter"]);

/** The expressions of a health check, in Flux's order of evaluation. */
const ORDER = [
  ["inProgress", "Progressing"],
  ["failed", "Degraded"],
  ["current", "Healthy"],
] as const satisfies ReadonlyArray<readonly [keyof HealthCheckSpec, HealthStatus]>;

type Program = (context: Record<string, unknown>) => unknown;

interface CompiledCheck {
  /** spec.healthChecks index, for messages. */
  index: number;
  group: string;
  kind: string;
  /** Present expressions in evaluation order. */
  exprs: Array<{ field: string; status: HealthStatus; source: string; program: Program }>;
  hasCurrent: boolean;
}

/** Compiled spec.healthChecks: one per API group and kind. */
export interface HealthChecks {
  readonly checks: readonly CompiledCheck[];
}

const environment = new Environment({
  unlistedVariablesAreDyn: true,
  enableOptionalTypes: true,
  limits: {
    maxAstNodes: CEL_LIMITS.maxAstNodes,
    maxDepth: CEL_LIMITS.maxDepth,
    maxListElements: CEL_LIMITS.maxListElements,
    maxMapEntries: CEL_LIMITS.maxMapEntries,
    maxCallArguments: CEL_LIMITS.maxCallArguments,
  },
});

/**
 * Parses every expression of `specs` once. An expression that does not parse, or exceeds a
 * limit of CEL_LIMITS, is an InvalidSpec issue at `spec.healthChecks[i].<field>` whose message
 * names the expression and the position (0-based character offset) of the problem; two
 * entries for the same group and kind are refused (Flux: "duplicate custom health check").
 */
export function compileHealthChecks(
  specs: readonly HealthCheckSpec[] | undefined,
): Result<HealthChecks, Issue[]> {
  const issues: Issue[] = [];
  const checks: CompiledCheck[] = [];
  const seen = new Map<string, number>();
  (specs ?? []).forEach((spec, index) => {
    const group = groupOf(spec.apiVersion);
    const key = `${group}/${spec.kind}`;
    const first = seen.get(key);
    if (first !== undefined) {
      issues.push({
        code: "InvalidSpec",
        path: `spec.healthChecks[${index}]`,
        message: `a second health check for ${spec.kind} in group "${group}" (the first is healthChecks[${first}])`,
      });
      return;
    }
    seen.set(key, index);
    const check: CompiledCheck = {
      index,
      group,
      kind: spec.kind,
      exprs: [],
      hasCurrent: spec.current !== undefined,
    };
    for (const [field, status] of ORDER) {
      const source = spec[field];
      if (source === undefined) continue;
      const compiled = compileExpression(source);
      if (compiled.ok) check.exprs.push({ field, status, source, program: compiled.value });
      else {
        issues.push({
          code: "InvalidSpec",
          path: `spec.healthChecks[${index}].${field}`,
          message: compiled.error,
        });
      }
    }
    checks.push(check);
  });
  return issues.length > 0 ? err(issues) : ok({ checks });
}

/** One expression parsed and checked against CEL_LIMITS; the error names it and where. */
export function compileExpression(source: string): Result<Program, string> {
  const quoted = JSON.stringify(source);
  if (source.length > CEL_LIMITS.maxLength) {
    return err(`${quoted} is longer than the limit of ${CEL_LIMITS.maxLength} characters`);
  }
  let parsed: Program & { ast: unknown };
  try {
    parsed = environment.parse(source) as Program & { ast: unknown };
  } catch (e) {
    const problem = firstLine(e);
    const pos = (e as ParseError & { node?: { pos?: number } }).node?.pos;
    return err(`${quoted}: ${problem}${pos === undefined ? "" : ` at position ${pos}`}`);
  }
  const nested = deepestNesting(parsed.ast, 0);
  if (nested.depth > CEL_LIMITS.maxComprehensionNesting) {
    return err(
      `${quoted}: comprehensions nest ${nested.depth} deep at position ${nested.pos}, beyond the limit of ${CEL_LIMITS.maxComprehensionNesting} (an evaluation would cost more than linear time)`,
    );
  }
  return ok(parsed);
}

/**
 * The health of `live` by the check for its group and kind, or undefined when none matches
 * (the built-in rule decides). Flux's order: a status.observedGeneration (an integer) behind
 * metadata.generation → Progressing; then inProgress → Progressing, failed → Degraded,
 * current → Healthy, the first that holds; none holds → Progressing while a `current` is
 * given (the object is not current yet), else undefined (the built-in rule). An expression is
 * evaluated with the object as `self` and its top-level fields (apiVersion, kind, metadata,
 * spec, status, …) as variables, as Flux does. An evaluation that fails or is not a bool →
 * Unknown naming the expression and the error. Never throws.
 */
export function celHealth(
  checks: HealthChecks | undefined,
  live: KubeObject,
): HealthResult | undefined {
  if (!checks || checks.checks.length === 0) return undefined;
  const group = groupOf(typeof live.apiVersion === "string" ? live.apiVersion : "");
  const check = checks.checks.find((c) => c.group === group && c.kind === live.kind);
  if (!check) return undefined;
  const generation = live.metadata?.generation;
  const observed = (live["status"] as { observedGeneration?: unknown } | undefined)
    ?.observedGeneration;
  if (Number.isInteger(observed) && Number.isInteger(generation) && observed !== generation) {
    return result("Progressing", `waiting for the controller to observe generation ${generation}`);
  }
  const context: Record<string, unknown> = { ...live, self: live };
  for (const expr of check.exprs) {
    const where = `healthChecks[${check.index}].${expr.field}`;
    let value: unknown;
    try {
      value = expr.program(context);
    } catch (e) {
      return result("Unknown", `${where} ${JSON.stringify(expr.source)} failed: ${firstLine(e)}`);
    }
    if (typeof value !== "boolean") {
      return result("Unknown", `${where} ${JSON.stringify(expr.source)} is not a bool`);
    }
    if (value) return result(expr.status, `${where} holds: ${expr.source}`);
  }
  return check.hasCurrent
    ? result("Progressing", `waiting for healthChecks[${check.index}].current`)
    : undefined;
}

function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split("\n")[0] ?? text;
}

/** How deep comprehensions nest in each other's bodies (a receiver chain does not nest). */
function deepestNesting(node: unknown, depth: number): { depth: number; pos: number } {
  let best = { depth, pos: 0 };
  const visit = (n: unknown, d: number) => {
    const found = deepestNesting(n, d);
    if (found.depth > best.depth) best = found;
  };
  if (Array.isArray(node)) {
    for (const item of node) visit(item, depth);
    return best;
  }
  if (typeof node !== "object" || node === null) return best;
  const { op, args, pos } = node as { op?: unknown; args?: unknown; pos?: number };
  if (op === "rcall" && Array.isArray(args) && COMPREHENSIONS.has(args[0] as string)) {
    const inner = depth + 1;
    if (inner > best.depth) best = { depth: inner, pos: pos ?? 0 };
    visit(args[1], depth); // the receiver
    visit(args[2], inner); // the iteration variable and the body
    return best;
  }
  if (Array.isArray(args)) for (const a of args) visit(a, depth);
  else visit(args, depth);
  return best;
}
