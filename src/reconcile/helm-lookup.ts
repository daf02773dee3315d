// Helm's lookup, the host's side: the engine lists the lookups its request did not answer, and
// this reads them from the destination and renders again (docs/design.md, "Render engines").
import { KubeApiError, type KubeObject } from "../core/index.ts";
import {
  describeLookup,
  EngineError,
  type HelmOutput,
  type HelmRequest,
  type LookupAnswer,
  type LookupKey,
  MAX_LOOKUP_RENDERS,
  planLookup,
} from "../render/index.ts";
import type { RunContext } from "./context.ts";

/**
 * One Helm render, its lookups answered: the engine lists the lookups its request did not
 * answer; the host reads them (planLookup: read-only, the destination's namespace and the
 * cluster-scoped kinds Apps may apply; anything else is absent and logged) and renders again
 * with every answer so far, until a render asks nothing new. A chart without lookup renders
 * once. @throws EngineError("failed") when the lookups do not settle within MAX_LOOKUP_RENDERS
 */
export async function renderHelm(
  ctx: RunContext,
  helm: (request: HelmRequest) => Promise<HelmOutput>,
  request: HelmRequest,
  namespace: string,
): Promise<HelmOutput> {
  let output = await helm(request);
  const answers: LookupAnswer[] = [];
  for (let renders = 1; output.lookups?.length; renders++) {
    if (renders >= MAX_LOOKUP_RENDERS) {
      const asked = output.lookups.map(describeLookup).join(", ");
      throw new EngineError(
        "failed",
        `the chart's lookups did not settle in ${MAX_LOOKUP_RENDERS} renders (still asking for ${asked})`,
      );
    }
    for (const key of output.lookups) answers.push(await answerLookup(ctx, key, namespace));
    output = await helm({ ...request, lookups: answers });
  }
  return output;
}

/** One lookup read from the destination (see renderHelm); Secrets read are redacted. */
async function answerLookup(
  ctx: RunContext,
  key: LookupKey,
  destinationNamespace: string,
): Promise<LookupAnswer> {
  const info = await ctx.cluster.resourceFor(key.apiVersion, key.kind);
  const plan = planLookup(key, info, {
    destinationNamespace,
    allowedClusterKinds: ctx.policy.clusterKinds,
  });
  const absent = (why: string) => {
    ctx.ports.log?.({
      app: ctx.id,
      msg: "helm lookup answered as absent",
      lookup: describeLookup(key),
      why,
    });
    return { ...key };
  };
  if (plan.read === "none") return absent(plan.why);
  try {
    let object: Record<string, unknown> | undefined;
    if (plan.read === "get") {
      const ref = { apiVersion: key.apiVersion, kind: key.kind, name: plan.name };
      const found = await ctx.cluster.get(
        plan.namespace ? { ...ref, namespace: plan.namespace } : ref,
      );
      if (found) ctx.ports.redactor?.addSecretsOf([found]);
      object = found;
    } else {
      const items = await ctx.cluster.list(key.apiVersion, key.kind, "", plan.namespace);
      ctx.ports.redactor?.addSecretsOf(items);
      object = listOf(key, items);
    }
    return object ? { ...key, object } : { ...key };
  } catch (e) {
    // What plumb's identity may not read looks absent, as it would to `helm template`.
    if (e instanceof KubeApiError && (e.status === 403 || e.status === 401)) {
      return absent(`plumb may not read it (${e.status})`);
    }
    throw e;
  }
}

/** A list as Helm's lookup returns it (the API server's List object). */
function listOf(key: LookupKey, items: KubeObject[]): Record<string, unknown> {
  return { apiVersion: key.apiVersion, kind: `${key.kind}List`, metadata: {}, items };
}
