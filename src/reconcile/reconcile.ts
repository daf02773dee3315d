// reconcileApp: one stateless run for one App, as a checklist (docs/design.md, "The reconcile";
// modelled on Flux kustomize-controller's reconcile()). Steps 1–7 find out where the App stands
// and plan the run (plan/run.ts); steps 8–20 carry the plan out (steps.ts), each step adding to
// the run's outcome, whose status is written once, by recordRun (step 19).
import { type AppSpec, FINALIZER, validateSpec } from "../app/index.ts";
import {
  err,
  FailureReason,
  formatIssues,
  type Issue,
  type NamespacedName,
  nameOf,
  ok,
  type Result,
  refOf,
} from "../core/index.ts";
import {
  afterTargetFailed,
  clusterIssue,
  type Failure,
  type HeadRender,
  planAbort,
  planFinalize,
  planRun,
  planStop,
  refuseEmptyRender,
  renderDue,
  sourceRepoIssue,
} from "../plan/index.ts";
import { destinationIssue } from "../render/index.ts";
import { type RunContext, type RunOptions, runContext, withPolicy } from "./context.ts";
import { connectDestination, countingRemotes } from "./destination.ts";
import { isRestart } from "./lease.ts";
import type { Ports, RequestCounts } from "./ports.ts";
import type { RunLine, RunResult } from "./record.ts";
import { redactingPorts } from "./redaction.ts";
import { type Desired, type ResolvedSource, renderRevision, resolveSource } from "./source.ts";
import { carryOut, isConflict, isRecordable, type PreparedRun } from "./steps.ts";

export type { RunOptions } from "./context.ts";
export type { RunResult } from "./record.ts";

/**
 * Runs of one call: a conflicting status write, a busy or lost Lease, or an App that changed
 * while the run waited for its Lease starts the run over.
 */
const MAX_ATTEMPTS = 3;
/** spec.interval of an App whose spec does not validate. */
const DEFAULT_INTERVAL = "5m";
/** The longest App name: it is the value of the plumb.dev/app label on every object. */
const MAX_NAME = 63;

/**
 * Reconciles App `namespace/name` once. Stateless: safe to run from a webhook, a cron tick and
 * a queue message at the same time — writes to objects and the status write that follows
 * them happen under a per-App Lease taken after the run re-read the App (takeLease), and
 * every status write is conditional on the resourceVersion the run holds (a conflict re-runs,
 * up to 3 times in all). A run that fails records its failure in status and a Warning Event,
 * also when a request to the API server fails for good. Everything the run
 * writes or returns passes through one redactor (`ports.redactor`, or the run's own), which
 * learns the run's source credentials and the values of the Secrets it renders.
 * @param now the run's clock (every time written to status derives from it)
 * @param options what the trigger knows: a full comparison owed (its slot came, or a person
 *   asked for the run: the CLI on one App, `--force`), a revision already resolved
 * @returns the outcome and the API requests made, by verb (to the App's cluster and to its
 *   remote destination); `error` names what failed (never a secret); `retryable` when the run
 *   ended before recording its outcome in status.
 */
export async function reconcileApp(
  ref: NamespacedName,
  given: Ports,
  now: Date,
  options: RunOptions = {},
): Promise<RunResult> {
  const ports = redactingPorts(given);
  const before = ports.kube.requestCounts();
  const remotes = countingRemotes(ports);
  let line: RunLine = { app: nameOf(ref), outcome: "Failed", error: "not run" };
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    try {
      line = await runOnce(ref, remotes.ports, now, options);
      break;
    } catch (e) {
      line = {
        app: nameOf(ref),
        outcome: "Failed",
        error: e instanceof Error ? e.message : String(e),
        retryable: true,
      };
      if (!isRestart(e) && !isConflict(e)) break;
      ports.log?.({ app: nameOf(ref), msg: "retrying after a concurrent change", attempt });
    }
  }
  const requests = requestsSince(before, ports.kube.requestCounts());
  for (const [verb, n] of Object.entries(remotes.counts())) {
    requests[verb as keyof RequestCounts] += n;
  }
  return ports.redactor.redactValue({ ...line, requests });
}

/**
 * One attempt: step 1, then the run prepared (steps 2–7) and carried out (steps 8–20, steps.ts).
 */
async function runOnce(
  ref: NamespacedName,
  ports: Ports,
  now: Date,
  options: RunOptions,
): Promise<RunLine> {
  // 1. Get the App. Gone: done. Being deleted: finalize (planFinalize), unless plumb's
  //    finalizer is gone already. Otherwise ensure the finalizer (in prepare).
  const app = await ports.kube.getApp(ref.namespace, ref.name);
  if (!app) return { app: nameOf(ref), outcome: "NotFound" };
  const start = runContext(app, ports, now, options);
  if (!app.metadata.deletionTimestamp) return carryOut(await prepare(start, options));
  if (!(app.metadata.finalizers ?? []).includes(FINALIZER)) {
    return { app: start.id, outcome: "Finalized" };
  }
  const spec = validateSpec(app.spec);
  const interval = spec.ok ? spec.value.interval : DEFAULT_INTERVAL;
  return carryOut({ ctx: start, interval, plan: planFinalize(app) });
}

/**
 * Steps 1 (the finalizer) to 7 for an App that exists and is not being deleted: where it stands,
 * and the plan of the rest. A step that fails plans a stop at its failure; an error no step
 * expected (isRecordable) plans its record from the context reached.
 */
async function prepare(start: RunContext, options: RunOptions): Promise<PreparedRun> {
  let ctx = start;
  let interval = DEFAULT_INTERVAL;
  try {
    const finalizers = ctx.app.metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER)) {
      const app = await ctx.ports.kube.setFinalizers(ctx.app, [...finalizers, FINALIZER]);
      ctx = runContext(app, ctx.ports, ctx.now, options);
    }
    // The rules the App follows: the cluster's AppPolicies, or the process's settings.
    ctx = await withPolicy(ctx);
    const { app } = ctx;

    // 2. Validate the spec and what the policy allows. Invalid: Stalled until the generation
    //    changes.
    const spec = validateApp(ctx);
    if (!spec.ok) return { ctx, interval, plan: planStop(app, spec.error) };
    interval = spec.value.interval;

    // 3. Connect to the destination (another cluster: its kubeconfig Secret).
    const destination = await connectDestination(ctx, spec.value);
    if (!destination.ok) return { ctx, interval, plan: planStop(app, destination.error) };
    ctx = destination.value;

    // 4. Resolve the source to a revision (ls-refs, tag → digest, chart version).
    const source = await resolveSource(ctx, spec.value);
    if (!source.ok) return { ctx, interval, plan: planStop(app, source.error) };
    const { revision } = source.value;

    // 5. Render the head revision (pure after the fetch), unless nothing changed since the last
    //    full run and no comparison is owed (the fast path: health only).
    const due = renderDue(app, spec.value, revision, ctx.departed.length, ctx.compare);
    const head = due ? await renderHead(ctx, spec.value, revision, source.value) : undefined;

    // 6. Plan: the gates (freeze, a pending operation, requiresApproval, automated, sync
    //    windows) and the rules around them decide the steps.
    let plan = planRun({
      app,
      spec: spec.value,
      revision,
      head: head && headRender(head),
      inventory: ctx.inventory,
      departed: ctx.departed.length,
      dns: ctx.ports.dns !== undefined,
      now: ctx.now,
    });

    // 7. The render the plan names: the head's, or another revision's (Rollback, Approve),
    //    rendered here, before any Lease; one that fails stops the run.
    let target = head?.ok ? head.value : undefined;
    if (typeof plan.render === "object") {
      const other = await renderHead(ctx, spec.value, plan.render.revision, source.value);
      if (other.ok) target = other.value;
      else plan = afterTargetFailed(plan, other.error);
    }
    return { ctx, interval, plan, target };
  } catch (e) {
    if (!isRecordable(e)) throw e;
    return { ctx, interval, plan: planAbort(ctx.app, e) };
  }
}

/**
 * Step 2: the spec, validated and defaulted, with a destination the App may use; else
 * InvalidSpec (Stalled).
 */
export function validateApp(ctx: RunContext): Result<AppSpec, Failure> {
  const validated = validateSpec(ctx.app.spec);
  const issues: Issue[] = validated.ok ? [] : [...validated.error];
  if (ctx.app.metadata.name.length > MAX_NAME) {
    issues.push({
      code: "InvalidSpec",
      path: "metadata.name",
      message: "must be at most 63 characters (it labels every object)",
    });
  }
  if (validated.ok) {
    // A destination the App may not use is its spec's fault: said before any source is read.
    const refused = destinationIssue({
      appNamespace: ctx.app.metadata.namespace,
      destinationNamespace: validated.value.destination.namespace ?? ctx.app.metadata.namespace,
      allowedNamespaces: ctx.policy.destinations,
      ...(ctx.policy.source ? { policySource: ctx.policy.source } : {}),
    });
    if (refused) issues.push(refused);
    const cluster = validated.value.destination.cluster;
    const clusterRefused =
      typeof cluster === "object" && clusterIssue(cluster.secretRef.name, ctx.policy);
    if (clusterRefused) issues.push(clusterRefused);
    const sourceRefused = sourceRepoIssue(validated.value, ctx.policy);
    if (sourceRefused) issues.push(sourceRefused);
  }
  if (validated.ok && issues.length === 0) return ok(validated.value);
  return err({ reason: FailureReason.InvalidSpec, message: formatIssues(issues), stalled: true });
}

/**
 * Steps 5 and 7: render `revision`, then the empty-render rule (a render with no objects
 * while the App owns some is refused unless allowEmpty).
 */
export async function renderHead(
  ctx: RunContext,
  spec: AppSpec,
  revision: string,
  source: ResolvedSource,
): Promise<Result<Desired, Failure>> {
  const rendered = await renderRevision(ctx, spec, revision, source.auth);
  if (!rendered.ok) return rendered;
  const empty = refuseEmptyRender(
    spec,
    rendered.value.objects.length,
    ctx.inventory.length,
    revision,
  );
  return empty ? err(empty) : rendered;
}

/** A render as the plan sees it. */
function headRender(head: Result<Desired, Failure>): HeadRender {
  return head.ok
    ? { ok: true, objectHash: head.value.objectHash, refs: head.value.objects.map(refOf) }
    : { ok: false, failure: head.error };
}

function requestsSince(before: RequestCounts, after: RequestCounts): RequestCounts {
  const out = { ...after };
  for (const verb of Object.keys(out) as Array<keyof RequestCounts>) {
    out[verb] = after[verb] - (before[verb] ?? 0);
  }
  return out;
}
