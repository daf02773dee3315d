// spec.source.app: an application from a short service spec (services, jobs, needs), rendered
// by plumb into Deployments, Services, Ingresses, PVCs, CronJobs and StatefulSets.
// A new source beside `image` rather than an extension of it: `image` Apps keep rendering exactly
// what they did, and a list of services has a shape of its own.
import { z } from "zod";
import { DNS_SUBDOMAIN } from "../core/index.ts";
import { isTagRange, normalizeRange } from "./tag-policy.ts";

/** RFC 1035 label: the Kubernetes rule for Service names (starts with a letter). */
const DNS_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
/**
 * A host name for an Ingress rule: lower-case RFC 1123, at least two labels, no wildcard (length
 * checked apart: the API server's RE2 has no lookahead).
 */
const HOSTNAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)+$/;
/** Environment variable names as Kubernetes validated them before 1.34 (portable to any shell). */
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
/** A resource.Quantity: "100m", "0.5", "128Mi", "1Gi", "2e3". */
const QUANTITY = /^[0-9]+(\.[0-9]+)?([eE][0-9]+|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;
/** OCI tag grammar (distribution spec). */
const TAG = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;
/** A cron schedule: five fields, or a macro (robfig/cron, as the CronJob controller parses it). */
const CRON =
  /^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|@every [0-9a-z.]+|(\S+\s+){4}\S+)$/;

/** Needs plumb can provide: each becomes a workload of its own (see render/service/needs.ts). */
export const NEEDS = ["postgres", "redis"] as const;
export const SIZES = ["small", "medium", "large"] as const;

const name = (what: string, max: number) =>
  z
    .string()
    .max(max)
    .regex(DNS_1035, "must be a lower-case RFC 1035 label (a-z, 0-9, '-', starting with a letter)")
    .describe(`Name of the ${what}; the objects rendered for it are named after it.`);

const quantity = (what: string) =>
  z
    .string()
    .regex(QUANTITY, "must be a Kubernetes quantity such as 250m, 0.5, 512Mi or 1Gi")
    .describe(what);

const tag = z
  .string()
  .min(1)
  .refine(
    (t) => (isTagRange(t) ? normalizeRange(t) !== undefined : TAG.test(t)),
    "must be a tag ([a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}) or a semver range such as ~1.4 or >=2 <3",
  )
  .describe(
    "Tag to deploy, or a semver range over the repository's tags (~1.4, >=2 <3, 1.*: anything with a character no tag may have): the highest matching version is chosen, as Flux's ImagePolicy does; prereleases only when the range names one. Pinned to its digest.",
  );

/** An OCI manifest digest as plumb pins it (and as the kubelet pulls it). */
const DIGEST = /^sha256:[0-9a-f]{64}$/;

const digest = z
  .string()
  .regex(DIGEST, "must be a manifest digest: sha256: and 64 lower-case hex digits")
  .optional()
  .describe(
    "The image's manifest digest (sha256:…): the image is used as it is, <image>@<digest>, with no registry lookup (as Kustomize's images[].digest); tag is then a tag, not a range, and only labels the version.",
  );

/** A digest pins one manifest: a range beside it would choose nothing. */
const digestWithTag = (
  o: { tag?: string | undefined; digest?: string | undefined },
  ctx: z.RefinementCtx,
) => {
  if (o.digest !== undefined && o.tag !== undefined && isTagRange(o.tag)) {
    ctx.addIssue({
      code: "custom",
      message: "a digest pins one image: give a tag, not a semver range, with it",
      path: ["tag"],
    });
  }
};

const repository = z
  .string()
  .min(1)
  .max(255)
  .describe("Image repository, e.g. registry.example.com/org/web or nginx (Docker Hub).");

/** Keys must be environment variable names (zod's own record-key message says only "invalid key"). */
const envNames = (rec: Record<string, unknown>, ctx: z.RefinementCtx) => {
  for (const key of Object.keys(rec)) {
    if (!ENV_NAME.test(key))
      ctx.addIssue({
        code: "custom",
        message: "must be an environment variable name",
        path: [key],
      });
  }
};

/** A variable is set once: in env or in secretEnv. */
const distinctEnv = (
  o: { env?: Record<string, string> | undefined; secretEnv?: Record<string, unknown> | undefined },
  ctx: z.RefinementCtx,
) => {
  for (const key of Object.keys(o.secretEnv ?? {})) {
    if (o.env && key in o.env)
      ctx.addIssue({
        code: "custom",
        message: "is set in env too; set it in one of them",
        path: ["secretEnv", key],
      });
  }
};

const env = z
  .record(z.string(), z.string())
  .superRefine(envNames)
  .optional()
  .describe("Environment variables (name → value).");

const secretEnv = z
  .record(
    z.string(),
    z
      .object({
        name: z.string().min(1).max(253).regex(DNS_SUBDOMAIN).describe("Secret name."),
        key: z.string().min(1).max(253).describe("Key in the Secret's data."),
        optional: z
          .boolean()
          .default(false)
          .describe("Start the Pod even when the Secret or key is missing."),
      })
      .describe("A key of a Secret in the App's namespace."),
  )
  .superRefine(envNames)
  .optional()
  .describe("Environment variables from keys of Secrets (name → secret and key).");

const envFrom = z
  .array(z.string().min(1).max(253).regex(DNS_SUBDOMAIN))
  .max(20)
  .optional()
  .describe(
    "Secrets whose every key becomes an environment variable; optional, so a missing Secret does not block the Pod.",
  );

const resourceList = (what: string) =>
  z
    .object({
      cpu: quantity("CPU, in cores (250m, 1).").optional(),
      memory: quantity("Memory, in bytes (512Mi, 1Gi).").optional(),
    })
    .optional()
    .describe(what);

const resources = z
  .object({
    requests: resourceList("Requests, overriding the size's."),
    limits: resourceList("Limits, overriding the size's."),
  })
  .optional()
  .describe("Requests and limits, key by key over the size preset.");

const size = z
  .enum(SIZES)
  .default("small")
  .describe(
    "Size preset: small (cpu 100m, memory 256Mi; limit 256Mi), medium (500m, 1Gi; limit 1Gi), large (2, 4Gi; limit 4Gi). No CPU limit.",
  );

const command = z
  .array(z.string())
  .max(100)
  .optional()
  .describe("Entrypoint (replaces the image's ENTRYPOINT).");
const args = z
  .array(z.string())
  .max(100)
  .optional()
  .describe("Arguments (replace the image's CMD).");

const probePath = z
  .string()
  .startsWith("/")
  .max(1024)
  .describe("HTTP path probed on the service's port.");

export const AppService = z
  .object({
    name: name("service", 50),
    image: repository,
    tag: tag.default("latest"),
    digest,
    port: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .optional()
      .describe(
        "Container port. With one, the service gets a Service (port 80 → this port), a readiness probe and the PORT variable; without, it is a worker.",
      ),
    command,
    args,
    env,
    secretEnv,
    envFrom,
    replicas: z.number().int().min(0).max(1000).default(1).describe("Pod replicas."),
    size,
    resources,
    healthCheck: z
      .object({ path: probePath })
      .optional()
      .describe(
        "Readiness over HTTP on this path. Without it, readiness is a TCP check on the port (none without a port).",
      ),
    liveness: z
      .object({ path: probePath.optional() })
      .optional()
      .describe(
        "Liveness check (restarts the container after 5 failures in a row): HTTP on path, or TCP on the port. None unless declared.",
      ),
    volume: z
      .object({
        path: z.string().startsWith("/").max(1024).describe("Mount path in the container."),
        size: quantity("Capacity requested (1Gi, 10Gi).").default("1Gi"),
        storageClassName: z
          .string()
          .min(1)
          .max(253)
          .optional()
          .describe("StorageClass; the cluster's default when unset."),
      })
      .optional()
      .describe(
        'A persistent volume (a ReadWriteOnce PVC named <service>-data, never pruned unless annotated plumb.dev/prune: "true"). The Deployment then uses the Recreate strategy and at most 1 replica.',
      ),
    domains: z
      .array(z.string().max(253).regex(HOSTNAME, "must be a lower-case host name"))
      .max(20)
      .optional()
      .describe(
        "Host names served by this service: an Ingress per service, with TLS from cert-manager when the cluster sets an issuer. Needs a port.",
      ),
  })
  .refine((s) => s.port !== undefined || (s.domains ?? []).length === 0, {
    message: "domains need a port",
    path: ["domains"],
  })
  .refine((s) => s.port !== undefined || s.liveness === undefined, {
    message: "a liveness check needs a port",
    path: ["liveness"],
  })
  .superRefine(distinctEnv)
  .superRefine(digestWithTag)
  .refine((s) => s.volume === undefined || s.replicas <= 1, {
    message: "a service with a volume runs at most 1 replica (a ReadWriteOnce volume)",
    path: ["replicas"],
  })
  .describe("A long-running service: a Deployment, and with a port a Service.");

export const AppJob = z
  .object({
    name: name("job", 52),
    schedule: z
      .string()
      .max(200)
      .regex(CRON, "must be a cron schedule (five fields) or a macro such as @daily")
      .describe("Cron schedule (minute hour day-of-month month day-of-week), or @hourly, @daily…"),
    timeZone: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe("IANA time zone of the schedule (Europe/Berlin); the controller's when unset."),
    service: z
      .string()
      .optional()
      .describe(
        "Service whose image, tag, environment and size the job uses (unless given here). Either this or image.",
      ),
    image: repository.optional(),
    tag: tag.optional().describe("Tag or semver range of image (default latest)."),
    digest,
    command,
    args,
    env,
    secretEnv,
    envFrom,
    size: z.enum(SIZES).optional().describe("Size preset (default: the service's, or small)."),
    resources,
    concurrencyPolicy: z
      .enum(["Forbid", "Allow", "Replace"])
      .default("Forbid")
      .describe("What a run does while the previous one still runs."),
  })
  .superRefine(distinctEnv)
  .superRefine(digestWithTag)
  .refine((j) => (j.service === undefined) !== (j.image === undefined), {
    message: "exactly one of service and image must be set",
  })
  .refine((j) => j.digest === undefined || j.image !== undefined, {
    message: "digest pins the job's own image: set image with it (a service's digest is its own)",
    path: ["digest"],
  })
  .describe("A scheduled job: a CronJob.");

export const AppSource = z
  .object({
    services: z
      .array(AppService)
      .max(50)
      .default([])
      .describe("Long-running services (web servers, workers)."),
    jobs: z.array(AppJob).max(50).default([]).describe("Scheduled jobs."),
    needs: z
      .array(z.enum(NEEDS))
      .max(NEEDS.length)
      .default([])
      .describe(
        "Backing services plumb runs for the App: postgres (a StatefulSet with a 10Gi volume), redis. Every service and job gets their connection variables (DATABASE_URL, PG*; REDIS_URL, REDIS_*); passwords are generated once into Secrets plumb never overwrites or prunes.",
      ),
    imagePullSecrets: z
      .array(z.string().min(1).max(253).regex(DNS_SUBDOMAIN))
      .max(10)
      .optional()
      .describe("Secrets (kubernetes.io/dockerconfigjson) the Pods pull images with."),
    secretRef: z
      .object({ name: z.string().min(1).max(253).regex(DNS_SUBDOMAIN).describe("Secret name.") })
      .optional()
      .describe(
        "Registry credentials plumb resolves tags with (keys: token, or username and password).",
      ),
  })
  .superRefine((app, ctx) => {
    if (app.services.length + app.jobs.length === 0) {
      ctx.addIssue({ code: "custom", message: "declare at least one service or job" });
    }
    const seen = new Set<string>();
    app.services.forEach((s, i) => {
      if (seen.has(s.name))
        ctx.addIssue({ code: "custom", message: "duplicate name", path: ["services", i, "name"] });
      seen.add(s.name);
    });
    const jobs = new Set<string>();
    app.jobs.forEach((j, i) => {
      if (jobs.has(j.name))
        ctx.addIssue({ code: "custom", message: "duplicate name", path: ["jobs", i, "name"] });
      jobs.add(j.name);
      // A job's Pods carry its name as app.kubernetes.io/name: a service of the same name would
      // select them (its Service would route to them).
      if (seen.has(j.name))
        ctx.addIssue({
          code: "custom",
          message: "a service has this name; a job needs one of its own",
          path: ["jobs", i, "name"],
        });
      if (j.service !== undefined && !seen.has(j.service))
        ctx.addIssue({
          code: "custom",
          message: `no service named "${j.service}"`,
          path: ["jobs", i, "service"],
        });
    });
    if (new Set(app.needs).size !== app.needs.length)
      ctx.addIssue({ code: "custom", message: "duplicate need", path: ["needs"] });
    const hosts = new Map<string, string>();
    for (const s of app.services) {
      for (const host of s.domains ?? []) {
        const other = hosts.get(host);
        if (other !== undefined && other !== s.name)
          ctx.addIssue({
            code: "custom",
            message: `domain ${host} is served by both ${other} and ${s.name}`,
            path: ["services"],
          });
        hosts.set(host, s.name);
      }
    }
  })
  .describe(
    "An application from a service spec: services, jobs and the backing services it needs, rendered by plumb (no manifests).",
  );

export type AppSource = z.output<typeof AppSource>;
export type AppService = z.output<typeof AppService>;
export type AppJob = z.output<typeof AppJob>;
export type Need = (typeof NEEDS)[number];
export type Size = (typeof SIZES)[number];
