// Runtime configuration shared by the Worker and Node roots, validated at start-up.
import { z } from "zod";

/** Reconciler settings from env/bindings (the HTTP settings are in src/http/config.ts). */
export interface RuntimeConfig {
  /** Namespaces Apps may deploy to besides their own ("*" = any). */
  allowedDestinations: string[];
  /** Runs at once in `reconcile --all` and the cron tick. */
  concurrency: number;
}

const Env = z.object({
  PLUMB_ALLOWED_DESTINATIONS: z.string().optional(),
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
  const allowed = (r.data.PLUMB_ALLOWED_DESTINATIONS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return { allowedDestinations: allowed, concurrency: Number(r.data.PLUMB_CONCURRENCY ?? "4") };
}
