// Step 2b, the dependencies: every App in spec.dependsOn Ready (and its readyExpr) before this
// one is applied, and no dependency chain back to it; and after the record, the dependants of
// an App that became Ready, for their runs (plan: depends.ts).
import type { App } from "../app/index.ts";
import { FailureReason, type NamespacedName, nameOf } from "../core/index.ts";
import { compileExpression } from "../health/index.ts";
import {
  type DependencyState,
  dependantsOf,
  dependencyNotReady,
  dependencyRefs,
  describeCycle,
  type Failure,
  findCycle,
  readyTrue,
} from "../plan/index.ts";
import { listAppsOnce, type RunContext } from "./context.ts";

/** How many Apps the search for a cycle reads at most (one GET each). */
export const MAX_DEPENDENCY_READS = 100;

/**
 * Reads the App's dependencies and theirs (up to MAX_DEPENDENCY_READS Apps) and decides:
 * - a readyExpr that does not compile, or a chain that leads back to this App: InvalidSpec
 *   (Stalled), naming the expression and position, or the cycle ("a/x → a/y → a/x");
 * - a dependency missing, not Ready, or whose readyExpr does not hold: DependencyNotReady
 *   (not Stalled: its own run that makes it Ready runs this App, as does the schedule);
 * - else undefined: the run goes on.
 * readyExpr sees `dep` (the dependency App) and `self` (this App), as Flux's readyExpr.
 */
export async function checkDependencies(ctx: RunContext): Promise<Failure | undefined> {
  const refs = dependencyRefs(ctx.app.spec, ctx.ref.namespace);
  if (refs.length === 0) return undefined;
  const programs: Array<
    ReturnType<typeof compileExpression> extends infer R
      ? R extends { ok: true; value: infer P }
        ? P | undefined
        : never
      : never
  > = [];
  for (const [i, ref] of refs.entries()) {
    if (ref.readyExpr === undefined) {
      programs.push(undefined);
      continue;
    }
    const compiled = compileExpression(ref.readyExpr);
    if (!compiled.ok) return invalid(`spec.dependsOn[${i}].readyExpr: ${compiled.error}`);
    programs.push(compiled.value);
  }
  const read = new Map<string, App | undefined>();
  const graph = new Map<string, NamespacedName[]>([[ctx.id, refs]]);
  const queue: NamespacedName[] = [...refs];
  while (queue.length > 0 && read.size < MAX_DEPENDENCY_READS) {
    const next = queue.shift() as NamespacedName;
    const key = nameOf(next);
    if (read.has(key) || key === ctx.id) continue;
    const app = await ctx.ports.kube.getApp(next.namespace, next.name);
    read.set(key, app);
    if (!app) continue;
    const deps = dependencyRefs(app.spec, app.metadata.namespace);
    graph.set(key, deps);
    queue.push(...deps);
  }
  const cycle = findCycle(ctx.ref, graph);
  if (cycle) return invalid(`spec.dependsOn: a dependency cycle: ${describeCycle(cycle)}`);
  const states: DependencyState[] = refs.map((ref, i) => {
    const app = read.get(nameOf(ref));
    const program = programs[i];
    const state: DependencyState = { ref, app };
    if (app && program) {
      try {
        const value = program({ dep: app, self: ctx.app });
        state.expr = typeof value === "boolean" ? value : "not a bool";
      } catch (e) {
        state.expr = (e instanceof Error ? e.message : String(e)).split("\n")[0] ?? "";
      }
    }
    return state;
  });
  const message = dependencyNotReady(states);
  return message === undefined
    ? undefined
    : { reason: FailureReason.DependencyNotReady, message, stalled: false };
}

function invalid(message: string): Failure {
  return { reason: FailureReason.InvalidSpec, message, stalled: true };
}

/**
 * The Apps that depend on this one, when this run made it Ready (Ready was not True before
 * and is now): one list of the Apps, or the one this run made already (listAppsOnce), or in a
 * tick the Apps with dependsOn of the list its runs share. Their runs need not wait for their slot.
 */
export async function readyDependants(
  ctx: RunContext,
  before: App["status"],
  after: App["status"],
): Promise<NamespacedName[]> {
  if (readyTrue(before?.conditions) || !readyTrue(after?.conditions)) return [];
  // In a tick, the list its runs share (a first sync of N Apps listed every App N times).
  const apps = ctx.ports.inventories
    ? await ctx.ports.inventories.dependers(ctx.ports.kube)
    : await listAppsOnce(ctx);
  return dependantsOf(apps, ctx.ref);
}
