// Which rules govern an App: the AppPolicy resources in the cluster that select its namespace,
// or, in a cluster without any, the process's settings (PLUMB_ALLOWED_DESTINATIONS,
// PLUMB_ALLOWED_CLUSTER_KINDS). Pure: the policies are read by the caller.
import { type AppPolicyObject, AppPolicySpec, describeSource } from "../app/index.ts";
import { type Issue, matchesAny } from "../core/index.ts";

/** The process's own settings: the rules of a cluster that has no AppPolicy. */
export interface PolicySettings {
  /** PLUMB_ALLOWED_DESTINATIONS: namespaces besides an App's own ("*": any). */
  allowedDestinations: readonly string[];
  /** PLUMB_ALLOWED_CLUSTER_KINDS: cluster-scoped kinds besides Namespaces. */
  allowedClusterKinds: readonly string[];
}

/** The rules one App's run follows. */
export interface EffectivePolicy {
  /**
   * Where the rules come from, for messages: `AppPolicy "tenants"`, `AppPolicies "a", "b"`,
   * `the default policy (no AppPolicy selects namespace "x")`, or undefined for the process's
   * settings (messages then name the environment variables).
   */
  source?: string;
  /** Namespaces (patterns) an App may deploy to besides its own. */
  destinations: readonly string[];
  /** Cluster-scoped kinds (patterns) an App may apply besides Namespaces. */
  clusterKinds: readonly string[];
  /** kubeconfig Secret names (patterns) an App may deploy through; undefined: any. */
  clusters?: readonly string[];
  /** Source locations (patterns) an App may read; undefined: any. */
  sourceRepos?: readonly string[];
  /** AppPolicies that select the namespace but do not validate: they grant nothing. */
  invalid: readonly { name: string; message: string }[];
}

/**
 * The rules for the Apps of `appNamespace`.
 * - No AppPolicy selects the namespace (the kind is not installed, there are none, or none of
 *   their `appNamespaces` matches): the process's `settings`, as before AppPolicies existed.
 * - Otherwise only the policies that select it decide and the process's settings are ignored,
 *   so that every plumb process applies the same rules: each grants what it lists, together
 *   the union (an absent `clusters` or `sourceRepos` in any of them: any). A selecting policy
 *   that does not validate grants nothing and is named in `invalid` and in `source`; when no
 *   valid one is left, the App gets the default policy (its own namespace, Namespaces as the
 *   only cluster-scoped kind, any source): a broken policy never widens what is allowed.
 */
export function effectivePolicy(
  policies: readonly AppPolicyObject[] | undefined,
  appNamespace: string,
  settings: PolicySettings,
): EffectivePolicy {
  const fromSettings = (): EffectivePolicy => ({
    destinations: settings.allowedDestinations,
    clusterKinds: settings.allowedClusterKinds,
    invalid: [],
  });
  if (!policies || policies.length === 0) return fromSettings();
  const names: string[] = [];
  const invalid: { name: string; message: string }[] = [];
  const destinations: string[] = [];
  const clusterKinds: string[] = [];
  let clusters: string[] | undefined = [];
  let sourceRepos: string[] | undefined = [];
  const sorted = [...policies].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  for (const policy of sorted) {
    const spec = AppPolicySpec.safeParse(policy.spec);
    const selects = spec.success
      ? matchesAny(spec.data.appNamespaces, appNamespace)
      : selectsLoosely(policy.spec, appNamespace);
    if (!selects) continue;
    if (!spec.success) {
      const first = spec.error.issues[0];
      invalid.push({
        name: policy.metadata.name,
        message: `${first?.path.join(".") || "spec"}: ${first?.message ?? "invalid"}`,
      });
      continue;
    }
    names.push(policy.metadata.name);
    destinations.push(...(spec.data.destinations.namespaces ?? []));
    clusterKinds.push(...(spec.data.clusterKinds ?? []));
    const c = spec.data.destinations.clusters;
    clusters = c && clusters ? [...clusters, ...c] : undefined;
    const r = spec.data.sourceRepos;
    sourceRepos = r && sourceRepos ? [...sourceRepos, ...r] : undefined;
  }
  const broken = invalid
    .map((p) => `; AppPolicy "${p.name}" grants nothing: ${p.message}`)
    .join("");
  if (names.length === 0 && invalid.length === 0) return fromSettings();
  if (names.length === 0) {
    return {
      source: `the default policy (no valid AppPolicy selects namespace "${appNamespace}"${broken})`,
      destinations: [],
      clusterKinds: [],
      invalid,
    };
  }
  const quoted = names.map((n) => `"${n}"`).join(", ");
  return {
    source: `${names.length === 1 ? "AppPolicy" : "AppPolicies"} ${quoted}${broken ? ` (${broken.slice(2)})` : ""}`,
    destinations: unique(destinations),
    clusterKinds: unique(clusterKinds),
    ...(clusters ? { clusters: unique(clusters) } : {}),
    ...(sourceRepos ? { sourceRepos: unique(sourceRepos) } : {}),
    invalid,
  };
}

/**
 * The issue with an App's source when the policy does not list it (spec.source; every location
 * of the source must match one of `sourceRepos`), else undefined. Locations are compared
 * without user name, password, query or fragment (describeSource), as written in the spec.
 */
export function sourceRepoIssue(spec: unknown, policy: EffectivePolicy): Issue | undefined {
  const allowed = policy.sourceRepos;
  if (!allowed) return undefined;
  const described = describeSource(spec);
  const locations = described.location.split(", ").filter((l) => l !== "");
  const refused = locations.filter((l) => !matchesAny(allowed, l));
  if (refused.length === 0) return undefined;
  return {
    code: "InvalidSpec",
    path: `spec.source.${described.type}`,
    message: `source ${refused.map((l) => `"${l}"`).join(", ")} is not allowed by ${policy.source ?? "the policy"} (sourceRepos: ${allowed.join(", ") || "none"})`,
  };
}

/**
 * The issue with spec.destination.cluster when the policy does not list the kubeconfig Secret
 * `secretName`, else undefined.
 */
export function clusterIssue(secretName: string, policy: EffectivePolicy): Issue | undefined {
  const allowed = policy.clusters;
  if (!allowed || matchesAny(allowed, secretName)) return undefined;
  return {
    code: "InvalidSpec",
    path: "spec.destination.cluster.secretRef.name",
    message: `cluster Secret "${secretName}" is not allowed by ${policy.source ?? "the policy"} (destinations.clusters: ${allowed.join(", ") || "none"})`,
  };
}

/**
 * What a process should say when its own settings differ from the rules that govern an App
 * (AppPolicies that select its namespace make PLUMB_ALLOWED_DESTINATIONS and
 * PLUMB_ALLOWED_CLUSTER_KINDS inert there), else undefined: e.g. `PLUMB_ALLOWED_DESTINATIONS=dev
 * is ignored for Apps in "team-a": AppPolicy "tenants" governs them`.
 */
export function settingsNotice(
  policy: EffectivePolicy,
  appNamespace: string,
  settings: PolicySettings,
): string | undefined {
  if (!policy.source) return undefined;
  const set: string[] = [];
  if (settings.allowedDestinations.length > 0) {
    set.push(`PLUMB_ALLOWED_DESTINATIONS=${settings.allowedDestinations.join(",")}`);
  }
  if (settings.allowedClusterKinds.length > 0) {
    set.push(`PLUMB_ALLOWED_CLUSTER_KINDS=${settings.allowedClusterKinds.join(",")}`);
  }
  if (set.length === 0) return undefined;
  return `${set.join(" and ")} ${set.length === 1 ? "is" : "are"} ignored for Apps in "${appNamespace}": ${policy.source} ${policy.source.startsWith("AppPolicies") ? "govern" : "governs"} them`;
}

/** A policy that does not validate still names the namespaces it meant to govern. */
function selectsLoosely(spec: unknown, appNamespace: string): boolean {
  const list = (spec as { appNamespaces?: unknown } | undefined)?.appNamespaces;
  if (!Array.isArray(list)) return false;
  return matchesAny(
    list.filter((p): p is string => typeof p === "string"),
    appNamespace,
  );
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
