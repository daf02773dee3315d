// Runtime configuration shared by the Worker and Node roots, validated at start-up.
import { z } from "zod";

/** Reconciler settings from env/bindings (the HTTP settings are in src/http/config.ts). */
export interface RuntimeConfig {
  /** Namespaces Apps may deploy to besides their own ("*" = any). */
  allowedDestinations: string[];
  /** Cluster-scoped kinds Apps may apply besides Namespaces ("Kind", "group/Kind" or "*"). */
  allowedClusterKinds: string[];
  /** Runs at once in `reconcile --all` and the cron tick. */
  concurrency: number;
}

const Env = z.object({
  PLUMB_ALLOWED_DESTINATIONS: z.string().optional(),
  PLUMB_ALLOWED_CLUSTER_KINDS: z.string().optional(),
  PLUMB_CONCURRENCY: z
    .string()
    .regex(/^[1-9][0-9]*$/, "must be a positive integer")
    .optional(),
});

/**
 * Parses runtime settings. @throws Error naming the bad variable, e.g.
 * "PLUMB_CONCURRENCY: must be a positive integer".
 */
export function parseRuntimeConfig(env: Record<string, unknown>): RuntimeConfig {
  const r = Env.safeParse(env);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new Error(`${issue.path.join(".")}: ${issue.message}`);
  }
  const list = (v: string | undefined) =>
    (v ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  const allowed = list(r.data.PLUMB_ALLOWED_DESTINATIONS);
  return {
    allowedDestinations: allowed,
    allowedClusterKinds: list(r.data.PLUMB_ALLOWED_CLUSTER_KINDS),
    concurrency: Number(r.data.PLUMB_CONCURRENCY ?? "4"),
  };
}
