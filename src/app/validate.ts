// App spec validation: zod issues turned into data the status can list.
import type { z } from "zod";
import { err, type Issue, type IssueCode, ok, type Result } from "../core/index.ts";
import { AppSpec } from "./schema.ts";

/** Turns zod issues into Issues of `code`, paths prefixed with `prefix` ("spec", "body"). */
export function toIssues(error: z.ZodError, prefix: string, code: IssueCode): Issue[] {
  return error.issues.map((i) => ({
    code,
    path: [prefix, ...i.path.map(String)].filter((s) => s !== "").join("."),
    message: i.message,
  }));
}

/**
 * Validates and defaults an App's `spec`.
 * @param spec the raw `spec` object as read from the API server (unknown shape)
 * @returns the typed spec with defaults applied, or the issues (code InvalidSpec) with
 *   `spec.`-prefixed paths.
 */
export function validateSpec(spec: unknown): Result<AppSpec, Issue[]> {
  const r = AppSpec.safeParse(spec ?? {});
  return r.success ? ok(r.data) : err(toIssues(r.error, "spec", "InvalidSpec"));
}
