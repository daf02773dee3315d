// The AppPolicy API, plumb.dev/v1alpha1: what the Apps of some namespaces (a tenant) may do,
// kept in the cluster so that every plumb process (the Worker, `plumb serve`, a CronJob) applies
// the same rules. Cluster-scoped, so a tenant who may edit its own namespace cannot widen its
// own policy (Argo CD keeps the same in AppProjects, in its own namespace).
import { z } from "zod";
import { GROUP, VERSION } from "./schema.ts";

export const POLICY_KIND = "AppPolicy";
export const POLICY_PLURAL = "apppolicies";
export const POLICY_API_VERSION = `${GROUP}/${VERSION}`;

/** A name or a pattern where `*` stands for any run of characters (Argo CD's glob, abridged). */
const pattern = z.string().min(1).max(1024);

export const AppPolicySpec = z
  .object({
    appNamespaces: z
      .array(pattern)
      .min(1)
      .describe(
        'Namespaces whose Apps this policy governs: names or patterns with * ("team-*", "*").',
      ),
    destinations: z
      .object({
        namespaces: z
          .array(pattern)
          .optional()
          .describe(
            "Namespaces the Apps may deploy to besides their own (patterns with *). Absent: only their own.",
          ),
        clusters: z
          .array(pattern)
          .optional()
          .describe(
            "Names of the kubeconfig Secrets (spec.destination.cluster.secretRef.name) the Apps may deploy through. Absent: any Secret in the App's namespace.",
          ),
      })
      .default({})
      .describe("Where the Apps may deploy."),
    clusterKinds: z
      .array(pattern)
      .optional()
      .describe(
        'Cluster-scoped kinds the Apps may apply besides Namespaces: "Kind", "group/Kind" or "*". Absent: none.',
      ),
    sourceRepos: z
      .array(pattern)
      .optional()
      .describe(
        "Sources the Apps may read: Git URLs, image and chart repositories (patterns with *, e.g. https://github.com/org/*). Absent: any.",
      ),
  })
  .describe("What the Apps of the namespaces it selects may do.");

export type AppPolicySpec = z.output<typeof AppPolicySpec>;

/** An AppPolicy as read from the API server (spec not yet validated). */
export interface AppPolicyObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; resourceVersion?: string };
  spec?: unknown;
}
