// Helm's pre-delete and post-delete hooks for an App being deleted (Argo CD's PreDelete and
// PostDelete): rendered again from the revision last applied, run around the finalizer's prune.
// Helm: pkg/action/uninstall.go (execHook HookPreDelete, delete, execHook HookPostDelete).
import { validateSpec } from "../app/index.ts";
import { FailureReason, type KubeObject, refKey, refOf } from "../core/index.ts";
import type { Failure, RunEvent } from "../plan/index.ts";
import type { RunContext } from "./context.ts";
import { connectDestination } from "./destination.ts";
import { type HookRecord, planHooks, runHookEvent } from "./hooks.ts";
import type { ClusterPort } from "./ports.ts";
import { renderRevision, sourceAuthOf } from "./source.ts";

/** The delete hooks of an App being deleted and the cluster they run on; or why not known. */
export type DeleteHooks =
  | { ok: true; cluster: ClusterPort; objects: KubeObject[] }
  | { ok: false; failure: Failure };

/**
 * The pre-delete and post-delete hooks of the revision last applied (status.revision), when
 * its apply recorded some (status.deleteHooks): the source is rendered again at that revision
 * (its credentials read as for a sync) and the hooks taken from it, to run on the App's
 * destination. undefined when there are none to run. A spec, destination or render that fails
 * is a HookFailed failure: the finalizer stays, and says why, until it renders (or the spec is
 * fixed).
 */
export async function deleteHooksOf(ctx: RunContext): Promise<DeleteHooks | undefined> {
  const listed = ctx.prev.deleteHooks ?? [];
  const revision = ctx.prev.revision;
  if (listed.length === 0 || !revision) return undefined;
  const failed = (message: string): DeleteHooks => ({
    ok: false,
    failure: {
      reason: FailureReason.HookFailed,
      message: `finalizer: the delete hooks of revision ${revision} (${listed.map((r) => r.name).join(", ")}): ${message}`,
      stalled: false,
    },
  });
  const spec = validateSpec(ctx.app.spec);
  if (!spec.ok) return failed("the spec is invalid, so they cannot be rendered; fix the spec");
  const dest = await connectDestination(ctx, spec.value);
  if (!dest.ok) return failed(dest.error.message);
  let auth: Awaited<ReturnType<typeof sourceAuthOf>>;
  try {
    auth = await sourceAuthOf(dest.value, spec.value);
  } catch (e) {
    return failed(e instanceof Error ? e.message : String(e));
  }
  const rendered = await renderRevision(dest.value, spec.value, revision, auth);
  if (!rendered.ok) return failed(`${rendered.error.reason}: ${rendered.error.message}`);
  return { ok: true, cluster: dest.value.cluster, objects: rendered.value.deleteHooks };
}

/**
 * Runs the `phase` hooks of deletion (pre-delete or post-delete) as hooks.ts runs any event:
 * by weight, Jobs and Pods waited for (HOOK_TIMEOUT_MS per group), delete policies honoured.
 * @returns undefined when they succeeded (or there were none), else the failure and its Event
 */
export async function runDeleteHooks(
  ctx: RunContext,
  hooks: Extract<DeleteHooks, { ok: true }>,
  phase: "pre" | "post",
): Promise<{ failure: Failure; event: RunEvent } | undefined> {
  const plan = planHooks(hooks.objects, "delete");
  const groups = phase === "pre" ? plan.pre : plan.post;
  if (groups.length === 0) return undefined;
  const record: HookRecord = { applied: new Map(), failed: new Map(), deleted: new Set() };
  const sleep = ctx.ports.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const failure = await runHookEvent(groups, hooks.cluster, sleep, record);
  if (!failure) {
    ctx.ports.log?.({
      app: ctx.id,
      msg: `${phase}-delete hooks ran`,
      hooks: groups.flat().map((o) => refKey(refOf(o))),
    });
    return undefined;
  }
  const message =
    phase === "pre"
      ? `finalizer: pre-delete ${failure}; nothing was pruned and the App is kept until it succeeds`
      : `finalizer: post-delete ${failure}; the App is kept until it succeeds`;
  return {
    failure: { reason: FailureReason.HookFailed, message, stalled: false },
    event: { type: "Warning", reason: FailureReason.HookFailed, message },
  };
}
