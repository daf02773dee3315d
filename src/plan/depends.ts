// spec.dependsOn: an App is applied only once the Apps it depends on are Ready, as Flux's
// dependsOn (kustomize-controller internal/controller/kustomization_controller.go
// checkDependencies). Decisions over Apps the loop has read. Pure.
import { type App, type Condition, KIND } from "../app/index.ts";
import { isRecord, type NamespacedName, nameOf } from "../core/index.ts";

/** A dependency as the run uses it: its namespace filled in. */
export interface DependencyRef extends NamespacedName {
  readyExpr?: string | undefined;
}

/**
 * The dependencies `spec` (an App's raw spec, validated or not) names, a missing namespace
 * being `namespace` (the App's own). Entries that are not `{name}` objects are skipped: an
 * invalid spec is its own App's problem, not its dependants'.
 */
export function dependencyRefs(spec: unknown, namespace: string): DependencyRef[] {
  const list = isRecord(spec) ? spec["dependsOn"] : undefined;
  if (!Array.isArray(list)) return [];
  const out: DependencyRef[] = [];
  for (const d of list) {
    if (!isRecord(d) || typeof d["name"] !== "string") continue;
    const ns = typeof d["namespace"] === "string" && d["namespace"] ? d["namespace"] : namespace;
    const ref: DependencyRef = { namespace: ns, name: d["name"] };
    if (typeof d["readyExpr"] === "string") ref.readyExpr = d["readyExpr"];
    out.push(ref);
  }
  return out;
}

/**
 * Whether `app` is Ready as a dependency, by Flux's rule: its Ready condition True, for the
 * generation it has now (status.observedGeneration equal to metadata.generation).
 */
export function isReadyDependency(app: App): boolean {
  const status = app.status ?? {};
  if ((status.conditions ?? []).length === 0) return false;
  if (
    app.metadata.generation !== undefined &&
    status.observedGeneration !== app.metadata.generation
  )
    return false;
  return readyTrue(status.conditions);
}

/** True when `conditions` has Ready=True. */
export function readyTrue(conditions: readonly Condition[] | undefined): boolean {
  return (conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
}

/** What one dependency is, as the run found it. */
export interface DependencyState {
  ref: DependencyRef;
  /** The App as read; undefined when it does not exist. */
  app: App | undefined;
  /** The readyExpr's verdict when it has one: true, false, or the evaluation's error. */
  expr?: boolean | string;
}

/**
 * The message of the first dependency that is not ready, in spec order, or undefined when all
 * are (Flux's messages): "dependency 'ns/name' not found", "... is not ready", "... is not
 * ready according to readyExpr" (or its evaluation error). The readyExpr comes in addition
 * to Ready, as Flux's AdditiveCELDependencyCheck.
 */
export function dependencyNotReady(states: readonly DependencyState[]): string | undefined {
  for (const { ref, app, expr } of states) {
    const id = `'${nameOf(ref)}'`;
    if (!app) return `dependency ${id} not found`;
    if (typeof expr === "string") return `dependency ${id}: readyExpr failed: ${expr}`;
    if (expr === false) return `dependency ${id} is not ready according to readyExpr`;
    if (!isReadyDependency(app)) return `dependency ${id} is not ready`;
  }
  return undefined;
}

/**
 * A dependency chain from `start` that leads back to it, as the Apps along it
 * ([start, a, b, start]), or undefined. `graph` gives each App's dependencies as read (an App
 * not in it was not read or does not exist: a dead end). Depth first, dependencies in spec
 * order, each App visited once.
 */
export function findCycle(
  start: NamespacedName,
  graph: ReadonlyMap<string, readonly NamespacedName[]>,
): NamespacedName[] | undefined {
  const seen = new Set<string>();
  const walk = (at: NamespacedName, path: NamespacedName[]): NamespacedName[] | undefined => {
    for (const next of graph.get(nameOf(at)) ?? []) {
      const key = nameOf(next);
      if (key === nameOf(start)) return [...path, next];
      if (seen.has(key)) continue;
      seen.add(key);
      const found = walk(next, [...path, next]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start, [start]);
}

/** "a/x → a/y → a/x": a cycle as InvalidSpec names it. */
export function describeCycle(cycle: readonly NamespacedName[]): string {
  return cycle.map(nameOf).join(" → ");
}

/** The Apps among `apps` whose spec.dependsOn names `target`, in the order given. */
export function dependantsOf(apps: readonly App[], target: NamespacedName): NamespacedName[] {
  return apps
    .filter((a) => a.kind === undefined || a.kind === KIND)
    .filter((a) =>
      dependencyRefs(a.spec, a.metadata.namespace).some(
        (d) => d.namespace === target.namespace && d.name === target.name,
      ),
    )
    .map((a) => ({ namespace: a.metadata.namespace, name: a.metadata.name }));
}
