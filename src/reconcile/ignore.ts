// spec.ignoreDifferences in the loop: the desired form of each existing object keeps its ignored
// fields' live values (plan: keepIgnoredLive) before it is compared, applied or healed.
import type { IgnoreDifference } from "../app/index.ts";
import { type KubeObject, refKey, refOf } from "../core/index.ts";
import { ignoreRulesFor, keepIgnoredLive } from "../plan/index.ts";
import type { RunContext } from "./context.ts";

/** spec.ignoreDifferences of the run's App (validated at step 2). */
export function ignoreRules(ctx: RunContext): readonly IgnoreDifference[] {
  const spec = ctx.app.spec as { ignoreDifferences?: IgnoreDifference[] } | undefined;
  return spec?.ignoreDifferences ?? [];
}

/**
 * `objects` in the form to apply: each one an ignore rule matches and that exists keeps its
 * ignored fields' live values (from `live` by refKey, else one GET). An object not live yet is
 * applied as rendered (its first creation sets every field). A failed read throws: applying
 * the rendered form instead would overwrite what is to be left alone.
 */
export async function keepIgnored(
  ctx: RunContext,
  objects: readonly KubeObject[],
  live?: ReadonlyMap<string, KubeObject>,
): Promise<KubeObject[]> {
  const rules = ignoreRules(ctx);
  if (rules.length === 0) return [...objects];
  const out: KubeObject[] = [];
  for (const obj of objects) {
    if (ignoreRulesFor(rules, obj).length === 0) {
      out.push(obj);
      continue;
    }
    const have = live?.get(refKey(refOf(obj))) ?? (await ctx.cluster.get(refOf(obj)));
    out.push(have ? keepIgnoredLive(obj, have, rules) : obj);
  }
  return out;
}
