// Derives the App CustomResourceDefinition from the zod schema (the one source of truth).
import { z } from "zod";
import { AppPolicySpec, POLICY_KIND, POLICY_PLURAL } from "./policy.ts";
import { ROW_COLUMNS } from "./row.ts";
import {
  API_VERSION,
  AppSpec,
  AppStatus,
  DURATION_PATTERN,
  GROUP,
  INTERVAL_RANGE,
  KIND,
  ONE_SOURCE,
  PATH_INSIDE,
  PLURAL,
  SOURCE_KIND_NAMES,
  VERSION,
} from "./schema.ts";

type Json = { [key: string]: unknown };

/** String formats the API server knows (k8s.io/kube-openapi pkg/validation/strfmt); others are dropped. */
const K8S_FORMATS = new Set([
  "date-time",
  "date",
  "duration",
  "uri",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid",
  "byte",
  "int32",
  "int64",
  "float",
  "double",
]);

/** JSON Schema keywords a structural CRD schema may not carry (apiextensions v1 rules). */
const DROP = new Set(["$schema", "propertyNames", "additionalProperties", "$id", "id"]);

/**
 * Rewrites zod's JSON Schema (draft 2020-12) into a Kubernetes structural schema:
 * drops unsupported keywords, turns `additionalProperties: {schema}` maps into
 * OpenAPI maps, and the "exactly one of git/image/app/chart" rule into a CEL validation.
 * Source: https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema
 */
export function toStructural(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toStructural);
  if (schema === null || typeof schema !== "object") return schema;
  const src = schema as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(src)) {
    if (DROP.has(key)) continue;
    if (key === "format" && !K8S_FORMATS.has(value as string)) continue;
    if ((key === "minimum" || key === "maximum") && Math.abs(value as number) > 2 ** 52) continue;
    if (key === "properties" && value && typeof value === "object") {
      // Property names are data, not keywords: a field called "id" or "format" stays.
      out[key] = Object.fromEntries(
        Object.entries(value as Json).map(([name, sub]) => [name, toStructural(sub)]),
      );
      continue;
    }
    out[key] = toStructural(value);
  }
  const ap = src["additionalProperties"];
  if (ap && typeof ap === "object" && src["properties"] === undefined) {
    out["additionalProperties"] = toStructural(ap);
  }
  return out;
}

/** JSONPath of a field of the Ready condition (kubectl evaluates the filter). */
const READY = (field: string) => `.status.conditions[?(@.type=="Ready")]${field}`;

function schemaOf(type: z.ZodType): Json {
  return toStructural(z.toJSONSchema(type, { io: "input", unrepresentable: "any" })) as Json;
}

/** The App CRD (apiextensions.k8s.io/v1) as a plain object, ready to serialize. */
export function appCrd(): Json {
  const spec = schemaOf(AppSpec);
  const source = (spec["properties"] as Json)["source"] as Json;
  source["x-kubernetes-validations"] = [
    {
      rule: `[${SOURCE_KIND_NAMES.map((k) => `has(self.${k})`).join(", ")}].filter(x, x).size() == 1`,
      message: ONE_SOURCE,
    },
  ];
  // spec.interval's range, which a JSON Schema pattern cannot say: refused when the App is
  // created, as validateSpec refuses it (a malformed duration is the pattern's to report).
  const interval = (spec["properties"] as Json)["interval"] as Json;
  interval["x-kubernetes-validations"] = [
    {
      rule: `!self.matches('${DURATION_PATTERN.replaceAll("\\", "\\\\")}') || (duration(self) >= duration('1s') && duration(self) <= duration('8760h'))`,
      message: INTERVAL_RANGE,
    },
  ];
  // spec.source.git.path stays inside the repository, as validateSpec says.
  const git = (source["properties"] as Json)["git"] as Json;
  const path = (git["properties"] as Json)["path"] as Json;
  path["x-kubernetes-validations"] = [
    { rule: "!self.split('/').exists(p, p == '..')", message: PATH_INSIDE },
  ];
  // destination.cluster is "" or {secretRef}: a structural schema cannot type a union (and CEL
  // cannot check an untyped field), so the API server keeps the field as written and plumb's
  // validation (zod) refuses a wrong shape with a Stalled InvalidSpec naming the field.
  const destination = (spec["properties"] as Json)["destination"] as Json;
  // zod leaves the default out of the JSON Schema of an object holding a preprocessed field;
  // the API server must default it as validateSpec does.
  destination["default"] = {};
  const cluster = (destination["properties"] as Json)["cluster"] as Json;
  (destination["properties"] as Json)["cluster"] = {
    description: cluster["description"],
    "x-kubernetes-preserve-unknown-fields": true,
  };
  const status = schemaOf(AppStatus);
  (status["properties"] as Json)["conditions"] = {
    ...((status["properties"] as Json)["conditions"] as Json),
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: KIND,
        listKind: `${KIND}List`,
        plural: PLURAL,
        singular: KIND.toLowerCase(),
        shortNames: ["papp"],
        categories: ["plumb"],
      },
      scope: "Namespaced",
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          // kubectl get apps: whether the App is Ready and why not (a failing App must not
          // look fine); -o wide adds the Ready condition's message.
          additionalPrinterColumns: [
            { name: "Ready", type: "string", jsonPath: READY(".status") },
            { name: "Reason", type: "string", jsonPath: READY(".reason") },
            { name: "Sync", type: "string", jsonPath: ".status.syncStatus" },
            { name: "Health", type: "string", jsonPath: ".status.healthStatus" },
            { name: "Revision", type: "string", jsonPath: ".status.shortRevision" },
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
            // What the scheduled tick reads from the compact (Table) list: `-o wide` only.
            ...ROW_COLUMNS.map((c) => ({ ...c, priority: 1 })),
            // Last, so the longest cell ends the wide line.
            { name: "Message", type: "string", jsonPath: READY(".message"), priority: 1 },
          ],
          schema: {
            openAPIV3Schema: {
              type: "object",
              description: `App is a plumb GitOps application (${API_VERSION}): a source rendered to Kubernetes objects and kept applied.`,
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

/** The AppPolicy CRD (apiextensions.k8s.io/v1): cluster-scoped, no status. */
export function policyCrd(): Json {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${POLICY_PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: POLICY_KIND,
        listKind: `${POLICY_KIND}List`,
        plural: POLICY_PLURAL,
        singular: POLICY_KIND.toLowerCase(),
        categories: ["plumb"],
      },
      // A tenant who may edit its own namespace must not be able to widen its own policy.
      scope: "Cluster",
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          additionalPrinterColumns: [
            { name: "App Namespaces", type: "string", jsonPath: ".spec.appNamespaces" },
            { name: "Destinations", type: "string", jsonPath: ".spec.destinations.namespaces" },
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
          schema: {
            openAPIV3Schema: {
              type: "object",
              description: `AppPolicy (${API_VERSION}) says what the Apps of the namespaces it selects may do: where they deploy, which cluster-scoped kinds they apply, which sources they read. Read by every plumb process; in namespaces no AppPolicy selects, each process's PLUMB_ALLOWED_DESTINATIONS and PLUMB_ALLOWED_CLUSTER_KINDS apply.`,
              required: ["spec"],
              properties: {
                apiVersion: { type: "string" },
                kind: { type: "string" },
                metadata: { type: "object" },
                spec: schemaOf(AppPolicySpec),
              },
            },
          },
        },
      ],
    },
  };
}
