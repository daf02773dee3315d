// AppPolicy resources, read for every run from the API server, with a short cache per process so
// that a tick or `reconcile --all` over many Apps lists them once.
import { type AppPolicyObject, POLICY_API_VERSION, POLICY_PLURAL } from "../app/index.ts";
import { type Call, toError } from "./request.ts";

/** How long a process reuses its list of AppPolicies (a policy edit applies within this). */
export const POLICY_CACHE_MS = 10_000;

/** Reading AppPolicies. */
export interface PolicyReader {
  /**
   * Every AppPolicy in the cluster, or undefined when the kind is not installed (404: a
   * cluster without AppPolicies, whose Apps follow the process's settings). One list per
   * POLICY_CACHE_MS per process; a failed list is not cached.
   * @throws KubeApiError on any other failure (403 included): a run must not fall back to the
   *   process's settings, which may allow more than the policy would
   */
  listPolicies(): Promise<AppPolicyObject[] | undefined>;
}

/** The AppPolicy reader over `call`, with `now` (ms clock) for its cache. */
export function createPolicyReader(call: Call, now: () => Date): PolicyReader {
  let cached: { at: number; policies: AppPolicyObject[] | undefined } | undefined;
  return {
    async listPolicies() {
      const at = now().getTime();
      if (cached && at - cached.at >= 0 && at - cached.at < POLICY_CACHE_MS) return cached.policies;
      const res = await call("list", "GET", `/apis/${POLICY_API_VERSION}/${POLICY_PLURAL}`);
      let policies: AppPolicyObject[] | undefined;
      if (res.status === 404) policies = undefined;
      else if (res.status >= 300) throw toError(res, "list AppPolicies");
      else
        policies = ((res.body as { items?: AppPolicyObject[] }).items ?? []).filter(
          (p) => typeof p?.metadata?.name === "string",
        );
      cached = { at, policies };
      return policies;
    },
  };
}
