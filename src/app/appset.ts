// The AppSet API, plumb.dev/v1alpha1: Apps stamped out of one template, one per set of
// parameters its generators yield (Argo CD's ApplicationSet, Flux Operator's ResourceSet).
import { z } from "zod";
import { toStructural } from "./crd.ts";
import { Condition, GROUP, VERSION } from "./schema.ts";

export const APPSET_KIND = "AppSet";
export const APPSET_PLURAL = "appsets";
export const APPSET_API_VERSION = `${GROUP}/${VERSION}`;
/** Label on every App an AppSet made, naming the AppSet (Argo CD sets an ownerReference only). */
export const APPSET_LABEL = `${GROUP}/appset`;

const ListGenerator = z
  .object({
    elements: z
      .array(z.record(z.string(), z.string()))
      .describe("One set of parameters per element: {name: value}."),
  })
  .describe("Fixed parameter sets (Argo CD's List generator).");

const ClustersGenerator = z
  .object({
    selector: z
      .object({ matchLabels: z.record(z.string(), z.string()).default({}) })
      .default({ matchLabels: {} })
      .describe("Kubeconfig Secrets of the AppSet's namespace with these labels."),
  })
  .describe(
    "One parameter set per kubeconfig Secret (see Many clusters): name, cluster (the Secret's name, for destination.cluster.secretRef.name), server.",
  );

const GitDirectory = z.object({
  path: z
    .string()
    .min(1)
    .describe('A glob over directory paths, Go path.Match syntax as Argo CD ("apps/*").'),
  exclude: z.boolean().default(false).describe("Directories this pattern matches are left out."),
});

const GitGenerator = z
  .object({
    repoURL: z.string().min(1).describe("The Git repository (https)."),
    revision: z.string().default("HEAD").describe("Branch, tag or commit to read."),
    secretRef: z
      .object({ name: z.string().min(1) })
      .optional()
      .describe("Credentials Secret in the AppSet's namespace, as spec.source.git.secretRef."),
    directories: z.array(GitDirectory).min(1),
  })
  .describe(
    "One parameter set per matching directory: path, path.basename, path.basenameNormalized (Argo CD's Git directory generator).",
  );

const PullRequestProvider = z.object({
  owner: z.string().optional().describe("GitHub/Gitea owner."),
  repo: z.string().optional().describe("GitHub/Gitea repository."),
  project: z.string().optional().describe("GitLab project id or path."),
  api: z.string().optional().describe("API base URL (default the provider's public one)."),
  tokenRef: z
    .object({ secretName: z.string().min(1), key: z.string().min(1) })
    .optional()
    .describe("Token in a Secret of the AppSet's namespace."),
  labels: z.array(z.string()).optional().describe("Only pull requests with all these labels."),
});

const PullRequestGenerator = z
  .object({
    github: PullRequestProvider.optional(),
    gitlab: PullRequestProvider.optional(),
    gitea: PullRequestProvider.optional(),
  })
  .describe(
    "One parameter set per open pull request: number, branch, branch_slug, head_sha, head_short_sha.",
  );

export const Generator = z.object({
  list: ListGenerator.optional(),
  clusters: ClustersGenerator.optional(),
  git: GitGenerator.optional(),
  pullRequest: PullRequestGenerator.optional(),
});
export type Generator = z.output<typeof Generator>;

export const AppSetSpec = z
  .object({
    generators: z
      .array(
        Generator.refine(
          (g) => Object.values(g).filter((v) => v !== undefined).length === 1,
          "each generator has exactly one of list, clusters, git, pullRequest",
        ),
      )
      .min(1),
    template: z
      .object({
        metadata: z.object({
          name: z.string().min(1),
          labels: z.record(z.string(), z.string()).optional(),
          annotations: z.record(z.string(), z.string()).optional(),
        }),
        spec: z
          .record(z.string(), z.unknown())
          .describe("An App spec; {{param}} is replaced by each parameter set's value."),
      })
      .describe("The App each parameter set makes (Argo CD's fasttemplate: {{path.basename}})."),
    deletePolicy: z
      .enum(["delete", "keep"])
      .default("delete")
      .describe(
        "delete: an App whose parameters vanished is deleted (its finalizer prunes). keep: it stays, released (owner reference and label removed).",
      ),
  })
  .describe("Apps stamped out of one template.");
export type AppSetSpec = z.output<typeof AppSetSpec>;

export const AppSetStatus = z.object({
  observedGeneration: z.number().int().optional(),
  conditions: z.array(Condition).optional(),
  apps: z
    .array(z.object({ name: z.string() }))
    .optional()
    .describe("The Apps this AppSet made."),
});
export type AppSetStatus = z.output<typeof AppSetStatus>;

/** An AppSet as read from the API server (spec not yet validated). */
export interface AppSetObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
  };
  spec?: unknown;
  status?: AppSetStatus;
}

type Json = { [key: string]: unknown };

/** The AppSet CRD (apiextensions.k8s.io/v1): namespaced, status subresource. */
export function appSetCrd(): Json {
  const schema = (t: z.ZodType) =>
    toStructural(z.toJSONSchema(t, { io: "input", unrepresentable: "any" })) as Json;
  const spec = schema(AppSetSpec);
  // The template's spec is an App spec checked by plumb after substitution ({{param}} may
  // stand where the App schema wants another type), so the API server keeps it as written.
  const template = (spec["properties"] as Json)["template"] as Json;
  const tspec = (template["properties"] as Json)["spec"] as Json;
  (template["properties"] as Json)["spec"] = {
    description: tspec["description"],
    type: "object",
    "x-kubernetes-preserve-unknown-fields": true,
  };
  const status = schema(AppSetStatus);
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${APPSET_PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: APPSET_KIND,
        listKind: `${APPSET_KIND}List`,
        plural: APPSET_PLURAL,
        singular: APPSET_KIND.toLowerCase(),
        categories: ["plumb"],
      },
      scope: "Namespaced",
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            {
              name: "Ready",
              type: "string",
              jsonPath: '.status.conditions[?(@.type=="Ready")].status',
            },
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
          schema: {
            openAPIV3Schema: {
              type: "object",
              description: `AppSet (${APPSET_API_VERSION}) makes one App per parameter set its generators yield, from a template.`,
              required: ["spec"],
              properties: {
                apiVersion: { type: "string" },
                kind: { type: "string" },
                metadata: { type: "object" },
                spec,
                status,
              },
            },
          },
        },
      ],
    },
  };
}
