// reconcileApp: one stateless run for one App, as a checklist (docs/design.md, "The reconcile, step by
// step"; modelled on Flux kustomize-controller's reconcile()). Each step returns what it found;
// the run's status is composed and written once, by recordRun (step 10).
import { type AppSpec, FINALIZER, type HealthStatus, validateSpec } from "../app/index.ts";
import {
  describeRef,
  EventReason,
  err,
  FailureReason,
  formatIssues,
  GateReason,
  type Issue,
  type NamespacedName,
  nameOf,
  ok,
  type Result,
  refKey,
  refOf,
} from "../core/index.ts";
import { assessSet } from "../health/index.ts";
import {
  appliedOutcome,
  type Decision,
  decide,
  type Failure,
  isSteady,
  needsOwners,
  observedOutcome,
  operationOutcome,
  pendingOperation,
  placeInventory,
  type RunOutcome,
  refuseEmptyRender,
  retryLeftovers,
  staleRefs,
  unchangedObjects,
} from "../plan/index.ts";
import { destinationIssue } from "../render/index.ts";
import { applyDesired, restartWorkloads } from "./apply.ts";
import { type RunContext, type RunOptions, runContext } from "./context.ts";
import { connectDestination, countingRemotes, pruneDeparted } from "./destination.ts";
import { type DnsOutcome, syncDns } from "./dns.ts";
import { type Correction, correctDrift } from "./drift.ts";
import { abortedOutcome, failedOutcome } from "./failed.ts";
import { finalizeApp } from "./finalize.ts";
import { checkHosts } from "./hosts.ts";
import { isRestart, withLease } from "./lease.ts";
import { finishedHealth, observe } from "./observe.ts";
import { claimedByOthers } from "./ownership.ts";
import type { Ports, RequestCounts } from "./ports.ts";
import { keepStale, pruneStale } from "./prune.ts";
import { type RunLine, type RunResult, recordRun } from "./record.ts";
import { redactingPorts } from "./redaction.ts";
import { rejectHeld } from "./reject.ts";
import { type Cursor, isConflict, isRecordable, settle } from "./settle.ts";
import { type Desired, renderRevision, resolveSource } from "./source.ts";
import { trackInventory } from "./track.ts";

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
 * them happen under a per-App Lease taken after the run re-read the App (withLease), and
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
 * Step 1, then the checklist. Every path ends in recordRun; an error no step expected is
 * recorded as the run's failure (isRecordable) from the context reached.
 */
async function runOnce(
  ref: NamespacedName,
  ports: Ports,
  now: Date,
  options: RunOptions,
): Promise<RunLine> {
  // 1. Get the App. Gone: done. Being deleted: finalize. Otherwise ensure the finalizer.
  const app = await ports.kube.getApp(ref.namespace, ref.name);
  if (!app) return { app: nameOf(ref), outcome: "NotFound" };
  if (app.metadata.deletionTimestamp) return finalizeApp(runContext(app, ports, now, options));
  let home = runContext(app, ports, now, options);
  try {
    const finalizers = app.metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER)) {
      home = runContext(
        await ports.kube.setFinalizers(app, [...finalizers, FINALIZER]),
        ports,
        now,
        options,
      );
    }
    return await checklist(home);
  } catch (e) {
    if (!isRecordable(e)) throw e;
    const spec = validateApp(home);
    const interval = spec.ok ? spec.value.interval : DEFAULT_INTERVAL;
    return recordRun(home, interval, abortedOutcome(home, e));
  }
}

/** Steps 2–10 for an App that exists and is not being deleted (`home`: its own cluster). */
async function checklist(home: RunContext): Promise<RunLine> {
  const { app, now } = home;

  // 2. Validate the spec. Invalid: Stalled until the generation changes.
  const spec = validateApp(home);
  if (!spec.ok) return recordRun(home, DEFAULT_INTERVAL, await failedOutcome(home, spec.error));
  const { interval } = spec.value;

  //    Connect to the destination (another cluster: its kubeconfig Secret).
  const destination = await connectDestination(home, spec.value);
  if (!destination.ok)
    return recordRun(home, interval, await failedOutcome(home, destination.error));
  const ctx = destination.value;

  // 3. Resolve the source to a revision (ls-refs, or tag → digest).
  const source = await resolveSource(ctx, spec.value);
  if (!source.ok) return recordRun(ctx, interval, await failedOutcome(ctx, source.error));
  const { revision, auth } = source.value;
  const observed = { observedRevision: revision };

  // 4. Fast path: nothing changed since the last full run, no comparison owed (its slot came,
  //    or a person asked for the run): health only. Objects left on a former destination are
  //    not steady: the full run moves them.
  if (
    ctx.departed.length === 0 &&
    isSteady(spec.value, ctx.prev, app.metadata.generation, revision, ctx.compare)
  ) {
    const seen = await observe(ctx, undefined);
    const outcome = observedOutcome({
      prev: ctx.prev,
      inventory: seen.inventory,
      desired: undefined,
      comparison: seen.comparison,
      health: seen.health,
    });
    return recordRun(ctx, interval, { ...outcome, ...observed });
  }

  // 5. Render the head revision (pure after the fetch). A failed render applies and prunes
  //    nothing; nor does an empty one while the App owns objects, unless allowEmpty. A
  //    Rollback or Approve names its own revision, so a broken head does not block it.
  const head = await renderHead(ctx, spec.value, revision, auth);
  const op = pendingOperation(spec.value, ctx.prev);
  const ownRevision = (op?.type === "Rollback" || op?.type === "Approve") && !spec.value.freeze;
  if (!head.ok && !ownRevision) {
    const outcome = await failedOutcome(ctx, head.error, {
      operation: op,
      outOfSync: revision !== ctx.prev.revision,
    });
    return recordRun(ctx, interval, { ...outcome, ...observed });
  }
  const found = head.ok ? { ...observed, observedObjectHash: head.value.objectHash } : observed;

  // 6. Gates: freeze, a pending operation, requiresApproval, automated, sync windows.
  const gates = decide(
    spec.value,
    ctx.prev,
    { revision, objectHash: head.ok ? head.value.objectHash : (ctx.prev.objectHash ?? "") },
    now,
  );
  //    Up to date, but a delete failed or objects wait on a former destination: sync again.
  const decision = head.ok
    ? retryLeftovers({
        decision: gates,
        spec: spec.value,
        revision,
        inventory: ctx.inventory,
        desired: head.value.objects.map(refOf),
        departed: ctx.departed.length,
      })
    : gates;
  switch (decision.action) {
    case "hold": {
      // Stage the revision for approval: a preview of what approving does, nothing applied.
      const desired = (head as { value: Desired }).value;
      const seen = await observe(ctx, desired, true);
      const outcome = observedOutcome({
        prev: ctx.prev,
        inventory: seen.inventory,
        desired,
        comparison: seen.comparison,
        health: seen.health,
        syncStatus: "Held",
      });
      outcome.held = { revision: desired.revision, objectHash: desired.objectHash };
      outcome.events.push({
        type: "Normal",
        reason: EventReason.Held,
        message: `revision ${desired.revision} is waiting for approval`,
      });
      return recordRun(ctx, interval, { ...outcome, ...found });
    }
    case "reject": {
      // A Reject operation: the held revision is turned down and recorded, nothing applied.
      return recordRun(ctx, interval, { ...(await rejectHeld(ctx, decision)), ...found });
    }
    case "restart": {
      // A Restart operation: annotate the workloads' pod templates, then observe.
      return withLease(ctx, (leased) =>
        settle(leased, interval, found, (cursor) => restart(cursor.ctx, decision)),
      );
    }
    case "none": {
      // 8. Observe health and compare live with desired (drift). A held revision is still a
      //    preview and a rejected one is nobody's desired state: no drift against either, so
      //    selfHeal never applies them.
      const waiting = decision.reason === GateReason.AwaitingApproval;
      const rejected = decision.reason === GateReason.Rejected;
      const desired = head.ok && !rejected ? head.value : undefined;
      const seen = await observe(ctx, desired, waiting);
      // 9. Correct drift: selfHeal re-applies what drifted, unless frozen, manual or outside
      //    a sync window.
      const wantsHeal =
        desired !== undefined &&
        !waiting &&
        seen.comparison.drift.length > 0 &&
        spec.value.syncPolicy.selfHeal &&
        spec.value.syncPolicy.automated &&
        !spec.value.freeze &&
        !decision.operation;
      const heal = wantsHeal && !decision.window;
      // DNS follows what is applied: re-checked on each full run while that is the desired set.
      const applied =
        desired !== undefined &&
        !spec.value.freeze &&
        desired.revision === ctx.prev.revision &&
        desired.objectHash === ctx.prev.objectHash;
      const dnsDue = applied && ctx.ports.dns !== undefined;
      const record = async (c: RunContext, corrected?: Correction) => {
        const outcome = observedOutcome({
          prev: c.prev,
          inventory: seen.inventory,
          desired,
          comparison: seen.comparison,
          health: seen.health,
          corrected,
          syncStatus: waiting ? "Held" : rejected ? "OutOfSync" : undefined,
        });
        if (decision.operation) refuseOperation(c, outcome, decision);
        const { window } = decision;
        if (window && (decision.reason === GateReason.OutsideSyncWindow || wantsHeal)) {
          outcome.syncWindow = window;
        }
        const dns = dnsDue && desired ? await syncDns(c, desired.objects) : undefined;
        return withDns(outcome, dns);
      };
      if (!(heal || dnsDue) || desired === undefined) {
        return recordRun(ctx, interval, { ...(await record(ctx)), ...found });
      }
      // Re-applying and DNS records are writes: under the Lease, recorded before its release.
      return withLease(ctx, (leased) =>
        settle(leased, interval, found, async (cursor) =>
          record(
            cursor.ctx,
            heal ? await correctDrift(cursor.ctx, desired, seen.comparison.drift) : undefined,
          ),
        ),
      );
    }
    case "apply": {
      // The decision may name another revision than the head (Rollback, Approve): render it.
      let target: Desired;
      if (head.ok && decision.revision === revision) target = head.value;
      else {
        const other = await renderHead(ctx, spec.value, decision.revision, auth);
        if (!other.ok) {
          const outcome = await failedOutcome(
            ctx,
            { ...other.error, stalled: false },
            {
              operation: decision.operation,
            },
          );
          return recordRun(ctx, interval, { ...outcome, ...found });
        }
        target = other.value;
      }
      const source = { revision, objectHash: head.ok ? head.value.objectHash : undefined };
      return withLease(ctx, (leased) =>
        settle(leased, interval, found, (cursor) =>
          sync(cursor, spec.value, target, decision, source),
        ),
      );
    }
  }
}

/**
 * Step 2: the spec, validated and defaulted, with a destination the App may use; else
 * InvalidSpec (Stalled).
 */
function validateApp(ctx: RunContext): Result<AppSpec, Failure> {
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
      allowedNamespaces: ctx.ports.allowedDestinations ?? [],
    });
    if (refused) issues.push(refused);
  }
  if (validated.ok && issues.length === 0) return ok(validated.value);
  return err({ reason: FailureReason.InvalidSpec, message: formatIssues(issues), stalled: true });
}

/** Step 5: render `revision`, then the empty-render rule. */
async function renderHead(
  ctx: RunContext,
  spec: AppSpec,
  revision: string,
  auth: Parameters<typeof renderRevision>[3],
): Promise<Result<Desired, Failure>> {
  const rendered = await renderRevision(ctx, spec, revision, auth);
  if (!rendered.ok) return rendered;
  const empty = refuseEmptyRender(
    spec,
    rendered.value.objects.length,
    ctx.inventory.length,
    revision,
  );
  return empty ? err(empty) : rendered;
}

/**
 * Steps 7–8 under the App's Lease: track what the apply may create (trackInventory), apply the
 * target (exact ownership: one list of Apps), prune what the last inventory has and the target
 * lacks, and take health from the apply responses.
 */
async function sync(
  cursor: Cursor,
  spec: AppSpec,
  target: Desired,
  decision: Extract<Decision, { action: "apply" }>,
  source: { revision: string; objectHash: string | undefined },
): Promise<RunOutcome> {
  // 7. Apply (staged: Namespaces and CRDs first; Helm hooks around the rest) what changed: an
  //    object in the form last applied and seen live and as desired is left alone.
  //    An operation (Sync, Deploy, Rollback, Approve: a person asked) applies the whole desired
  //    state again, as Argo CD's sync does. A host another Ingress serves: nothing. The other
  //    Apps' inventories are read only when an object is new to this one, a Namespace, or
  //    pruned. What the apply may create is tracked in status first (trackInventory).
  const unchanged = decision.operation
    ? new Map<string, { status: HealthStatus; message?: string }>()
    : unchangedObjects(target.objects, target.hashes, {
        inventory: cursor.ctx.inventory,
        resources: cursor.ctx.prev.resources,
        drift: cursor.ctx.prev.drift,
      });
  const changed = target.objects.filter((o) => !unchanged.has(refKey(refOf(o))));
  const skip = new Set(unchanged.keys());
  const hostConflict = await checkHosts(cursor.ctx, changed);
  if (hostConflict) {
    return failedOutcome(cursor.ctx, hostConflict, { operation: decision.operation });
  }
  //    A former destination first: prune what the App left there, or refuse.
  const departed = await pruneDeparted(cursor.ctx, spec.syncPolicy.prune);
  if (departed.failure?.reason === FailureReason.DestinationUnreachable) {
    const outcome = await failedOutcome(cursor.ctx, departed.failure, {
      operation: decision.operation,
    });
    return {
      ...outcome,
      departed: departed.remaining,
      events: [...departed.events, ...outcome.events],
    };
  }
  const stale = staleRefs(cursor.ctx.inventory, target.objects.map(refOf));
  const owners = needsOwners(changed, cursor.ctx.inventory, stale)
    ? await claimedByOthers(cursor.ctx)
    : new Map<string, string[]>();
  const toApply = changed
    .map(refOf)
    .filter((ref) => ref.kind === "Namespace" || !owners.has(refKey(ref)));
  cursor.ctx = await trackInventory(cursor.ctx, toApply);
  const ctx = cursor.ctx;
  const applied = await applyDesired(ctx, target.objects, owners, spec.adopt, target.hashes, skip);
  // 8. Prune: only after this render applied; failed deletes stay in the inventory. Nothing
  //    when a pre-sync hook stopped the apply.
  const desiredRefs = target.objects.map(refOf);
  const prune = applied.halted
    ? keepStale(ctx, desiredRefs, applied.halted)
    : await pruneStale(ctx, spec, desiredRefs, owners);
  // 8. Health of what was applied, from the objects the API server returned (and of objects
  //    whose apply failed, as they are).
  //    Objects left alone keep the health the last run saw.
  const live = new Map([...applied.existing, ...applied.applied]);
  const known = new Map<string, { status: HealthStatus; message?: string }>([
    ...unchanged,
    ...finishedHealth(applied.finished),
  ]);
  const health = assessSet(desiredRefs, live, ctx.now, known);
  // 8. DNS records of the applied Ingresses' hosts (when the cluster configures a zone); not
  //    while an Ingress failed to apply, whose records must not go for a passing error.
  const ingressFailed = target.objects.some(
    (o) => o.kind === "Ingress" && applied.failed.has(refKey(refOf(o))),
  );
  const dns = ingressFailed ? undefined : await syncDns(ctx, target.objects);
  const outcome = appliedOutcome({
    target,
    sourceRevision: source.revision,
    sourceObjectHash: source.objectHash,
    recreated: applied.recreated,
    finished: applied.finished,
    reason: decision.reason,
    operation: decision.operation,
    previous: ctx.inventory,
    applied: applied.applied,
    failed: applied.failed,
    uncertain: applied.uncertain,
    prune,
    health,
    now: ctx.now,
  });
  if (applied.adopted) {
    outcome.events.push({
      type: "Normal",
      reason: EventReason.Adopted,
      message: `took over ${applied.adopted.map(describeRef).join(", ")}`,
    });
  }
  outcome.departed = departed.remaining;
  outcome.events.push(...departed.events);
  if (departed.failure && !outcome.failure) outcome.failure = departed.failure;
  ctx.ports.inventories?.record(
    ctx.app,
    placeInventory(outcome.inventory, ctx.destination?.server, departed.remaining),
  );
  return withDns(outcome, dns);
}

/** The outcome with the DNS step's condition and Events, when it ran. */
function withDns(outcome: RunOutcome, dns: DnsOutcome | undefined): RunOutcome {
  if (!dns) return outcome;
  return { ...outcome, dns: dns.condition, events: [...outcome.events, ...dns.events] };
}

/** The Restart operation: annotate the inventory's workloads, then observe their health. */
async function restart(
  ctx: RunContext,
  decision: Extract<Decision, { action: "restart" }>,
): Promise<RunOutcome> {
  const { restarted, failed } = await restartWorkloads(ctx.inventory, ctx.cluster, ctx.now);
  const message =
    failed.size > 0
      ? [...failed.values()].join("; ")
      : `restarted ${restarted.map(describeRef).join(", ") || "nothing"}`;
  const done = operationOutcome(
    decision.operation,
    failed.size > 0 ? "Failed" : "Succeeded",
    message,
    ctx.now,
  );
  const seen = await observe(ctx, undefined);
  const outcome = observedOutcome({
    prev: ctx.prev,
    inventory: seen.inventory,
    desired: undefined,
    comparison: seen.comparison,
    health: seen.health,
    syncStatus: ctx.prev.syncStatus ?? "Unknown",
  });
  outcome.operationState = done.state;
  outcome.events.unshift(done.event);
  return outcome;
}

/** An operation the gates refused (frozen, stale approval...): consumed as Failed. */
function refuseOperation(
  ctx: RunContext,
  outcome: RunOutcome,
  decision: Extract<Decision, { action: "none" }>,
): void {
  if (!decision.operation) return;
  const done = operationOutcome(
    decision.operation,
    "Failed",
    decision.message ?? decision.reason,
    ctx.now,
  );
  outcome.operationState = done.state;
  outcome.events.unshift(done.event);
}

function requestsSince(before: RequestCounts, after: RequestCounts): RequestCounts {
  const out = { ...after };
  for (const verb of Object.keys(out) as Array<keyof RequestCounts>) {
    out[verb] = after[verb] - (before[verb] ?? 0);
  }
  return out;
}
