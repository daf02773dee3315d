// `plumb diff`: what applying a revision would do to an App's objects, found the way a held
// run finds its approval preview (steps 2–5 and the observe step's comparison, held), through
// ports that cannot write: nothing is applied, pruned or recorded.
import type { AppSpec } from "../app/index.ts";
import { type KubeObject, type NamespacedName, nameOf, refKey, refOf } from "../core/index.ts";
import { type DiffReport, diffReport } from "../plan/index.ts";
import { type RunContext, runContext, withPolicy } from "./context.ts";
import { connectDestination } from "./destination.ts";
import { observe } from "./observe.ts";
import type { ClusterPort, KubePort, Ports } from "./ports.ts";
import { renderHead, validateApp } from "./reconcile.ts";
import { redactingPorts } from "./redaction.ts";
import { resolveSource } from "./source.ts";

/** What `plumb diff` asks for. */
export interface DiffAppOptions {
  /**
   * A Git ref (branch, tag or commit) to render instead of spec.source.git.ref; only for a
   * Git source.
   */
  ref?: string | undefined;
  /** `ports.git` reads a local directory (`plumb diff --path`): only for a Git source. */
  local?: boolean | undefined;
}

/** A diff, or why there is none: the App is missing, or a step failed (`reason`: its Failure's). */
export type DiffOutcome =
  | { ok: true; report: DiffReport }
  | { ok: false; notFound: boolean; reason: string; error: string };

/**
 * What applying the App's source would change, as a held run previews it: the App read, its
 * spec validated, its destination connected, its source resolved (`options.ref`, else the
 * spec's ref; `ports.git` may be a local directory) and rendered, then each rendered object
 * compared with its live form by the same comparison as drift (observe: a local pass, then a
 * server-side-apply dry run with field manager plumb, dryRun=All, for each suspect object) and
 * the inventory's objects the render lacks listed as pruned. The ports are made read-only
 * first ({@link readOnlyPorts}): every apply is a dry run and any other write throws, so a
 * bug here could never change the cluster. Everything returned passes through the run's
 * redactor (rendered Secrets and source credentials); a Secret's values are masked.
 * @returns the report, or NotFound / the failing step's reason and message (InvalidSpec,
 *   SourceFailed, RenderFailed, DestinationInvalid …). Throws what the ports throw
 *   (KubeApiError after the transport's retries).
 */
export async function diffApp(
  ref: NamespacedName,
  given: Ports,
  now: Date,
  options: DiffAppOptions = {},
): Promise<DiffOutcome> {
  const ports = readOnlyPorts(redactingPorts(given));
  const { redactor } = ports;
  const fail = (reason: string, error: string): DiffOutcome =>
    redactor.redactValue({ ok: false, notFound: false, reason, error });
  const app = await ports.kube.getApp(ref.namespace, ref.name);
  if (!app) {
    return { ok: false, notFound: true, reason: "NotFound", error: `App ${nameOf(ref)} not found` };
  }
  // The same rules as a run: the cluster's AppPolicies, or the process's settings.
  let ctx: RunContext = await withPolicy(runContext(app, ports, now, { compare: true }));
  const validated = validateApp(ctx);
  if (!validated.ok) return fail(validated.error.reason, validated.error.message);
  if (options.local && !validated.value.source.git) {
    return fail(
      "InvalidArgument",
      "--path renders a local directory in place of a Git source's path; this App's source is not Git",
    );
  }
  const spec = withRef(validated.value, options.ref);
  if (!spec.ok) return fail("InvalidArgument", spec.error);
  const destination = await connectDestination(ctx, spec.value);
  if (!destination.ok) return fail(destination.error.reason, destination.error.message);
  ctx = { ...destination.value, cluster: readOnlyCluster(destination.value.cluster) };
  const source = await resolveSource(ctx, spec.value);
  if (!source.ok) return fail(source.error.reason, source.error.message);
  const desired = await renderHead(ctx, spec.value, source.value.revision, source.value);
  if (!desired.ok) return fail(desired.error.reason, desired.error.message);
  const dryRuns = new Map<string, KubeObject>();
  const seen = await observe(ctx, desired.value, true, dryRuns);
  const report = diffReport({
    app: ctx.id,
    revision: desired.value.revision,
    resources: seen.comparison.resources,
    desired: new Map(desired.value.objects.map((o) => [refKey(refOf(o)), o])),
    live: seen.live,
    dryRuns,
  });
  return { ok: true, report: redactor.redactValue(report) };
}

/** The spec with spec.source.git.ref replaced by `ref`; refused for a source that is not Git. */
function withRef(
  spec: AppSpec,
  ref: string | undefined,
): { ok: true; value: AppSpec } | { ok: false; error: string } {
  if (ref === undefined) return { ok: true, value: spec };
  const git = spec.source.git;
  if (!git) {
    return { ok: false, error: "--revision names a Git ref; this App's source is not Git" };
  }
  return { ok: true, value: { ...spec, source: { ...spec.source, git: { ...git, ref } } } };
}

/** KubePort and ClusterPort methods that write: refused by the read-only ports. */
const WRITES = new Set([
  "delete",
  "patchManagedFields",
  "setFinalizers",
  "writeStatus",
  "setOperation",
  "emitEvent",
  "acquireLease",
  "renewLease",
  "releaseLease",
]);

/** Thrown by a write the read-only ports refuse (a bug: `plumb diff` never writes). */
export class ReadOnlyError extends Error {
  constructor(method: string) {
    super(`plumb diff writes nothing to the cluster: ${method} refused`);
    this.name = "ReadOnlyError";
  }
}

/**
 * `cluster` that cannot write: `apply` is always a dry run (dryRun=All) and the other writes
 * (delete, patchManagedFields; for a KubePort also status, finalizers, operations, Events and
 * Leases) throw {@link ReadOnlyError}. Reads pass through.
 */
export function readOnlyCluster<T extends ClusterPort>(cluster: T): T {
  return new Proxy(cluster, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      if (name === "apply") {
        return (obj: KubeObject, opts?: Parameters<ClusterPort["apply"]>[1]) =>
          target.apply(obj, { ...opts, dryRun: true });
      }
      if (typeof name === "string" && WRITES.has(name)) {
        return () => Promise.reject(new ReadOnlyError(name));
      }
      return value.bind(target);
    },
  });
}

/**
 * `ports` that cannot change anything: the kube port read-only ({@link readOnlyCluster}),
 * remote destinations connected read-only by the caller, and no notification, DNS or
 * inventory-index port.
 */
export function readOnlyPorts<P extends Ports>(ports: P): P {
  const {
    notify: _notify,
    dns: _dns,
    inventories: _inventories,
    ...rest
  } = ports as P & Record<string, unknown>;
  return { ...rest, kube: readOnlyCluster<KubePort>(ports.kube) } as P;
}
