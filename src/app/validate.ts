// App spec validation: zod issues turned into data the status can list.
import type { z } from "zod";
import { AppSpec } from "./schema.ts";

/** One problem with an input, located by field path (e.g. "spec.source.git.url"). */
export interface Issue {
  path: string;
  message: string;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; issues: Issue[] };

/** Turns zod issues into `{path, message}` pairs, paths prefixed with `prefix`. */
export function toIssues(error: z.ZodError, prefix: string): Issue[] {
  return error.issues.map((i) => ({
    path: [prefix, ...i.path.map(String)].filter((s) => s !== "").join("."),
    message: i.message,
  }));
}

/**
 * Validates and defaults an App's `spec`.
 * @param spec the raw `spec` object as read from the API server (unknown shape)
 * @returns the typed spec with defaults applied, or the issues with `spec.`-prefixed paths.
 */
export function validateSpec(spec: unknown): Validated<AppSpec> {
  const r = AppSpec.safeParse(spec ?? {});
  return r.success ? { ok: true, value: r.data } : { ok: false, issues: toIssues(r.error, "spec") };
}

/** Formats issues for a person: "spec.source: exactly one of ...; spec.interval: ...". */
export function formatIssues(issues: readonly Issue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join("; ");
}
