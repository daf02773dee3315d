// The observe step's comparison: each rendered object that is live against what the API server
// would store if plumb applied it. A local pass (plan: suspect) picks the objects
// that may differ; each is confirmed with a server-side-apply dry run (Flux's way), and what
// applying would change is the dry run's result against live (plan: serverDiff). An object
// nothing suspects costs no request.
import { LABEL_APP, LABEL_APP_NAMESPACE, LABEL_MANAGED_BY } from "../app/index.ts";
import { type KubeObject, refKey, refOf } from "../core/index.ts";
import {
  applyOnlyIfAbsent,
  type DiffOptions,
  type ObjectDiff,
  readApplyError,
  serverDiff,
  suspect,
} from "../plan/index.ts";
import { isSecret } from "./apply-object.ts";
import type { ClusterPort } from "./ports.ts";

/**
 * What applying each live desired object would change, by refKey. `applied` holds the refKeys
 * whose rendered form is the one plumb last applied (plan: appliedForms): for those, a value
 * still owned by plumb is the server's normalisation and not suspect. Dry runs go one at a time
 * (field manager plumb, force, dryRun=All); a refused one is recorded with its short message.
 * `dryRuns`, when given, receives each dry run's result by refKey (`plumb diff` shows them).
 */
export async function compareWithServer(
  desired: readonly KubeObject[],
  live: ReadonlyMap<string, KubeObject>,
  applied: ReadonlySet<string>,
  cluster: ClusterPort,
  redact?: (text: string) => string,
  dryRuns?: Map<string, KubeObject>,
): Promise<Map<string, ObjectDiff>> {
  const out = new Map<string, ObjectDiff>();
  for (const obj of desired) {
    const key = refKey(refOf(obj));
    const have = live.get(key);
    // Nothing to compare: absent, or apply-if-absent (never plumb's to correct once it exists).
    if (!have || applyOnlyIfAbsent(obj)) continue;
    const options = diffOptions(obj);
    if (!suspect(obj, have, applied.has(key), options)) {
      out.set(key, { fields: [] });
      continue;
    }
    try {
      const dryRun = await cluster.apply(obj, { dryRun: true });
      dryRuns?.set(key, dryRun);
      out.set(key, { fields: serverDiff(dryRun, have, options) });
    } catch (e) {
      const { message, terminal } = readApplyError(e, { secret: isSecret(obj), redact });
      out.set(key, { error: message, terminal });
    }
  }
  return out;
}

const TRACKING = new Set(
  [LABEL_APP, LABEL_APP_NAMESPACE, LABEL_MANAGED_BY].map((l) => `metadata.labels.${l}`),
);

/**
 * A Namespace may be rendered by several Apps; its tracking labels name the one that applied it
 * first, so they are never a difference.
 */
function diffOptions(obj: KubeObject): DiffOptions {
  if (obj.kind === "Namespace" && obj.apiVersion === "v1")
    return { ignore: (p) => TRACKING.has(p) };
  return {};
}
