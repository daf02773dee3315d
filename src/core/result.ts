// Expected failures as values (zod's safeParse style): a step returns a Result, not a throw.

/** Success with a value, or failure with an error. */
export type Result<T, E> = { ok: true; value: T } | { ok: false; error: E };

/** A successful Result. */
export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

/** A failed Result. */
export function err<E>(error: E): { ok: false; error: E } {
  return { ok: false, error };
}

/**
 * What kind of problem an Issue is; the loop decides from it whether retrying can help:
 * - InvalidSpec: the App's spec must change (a schema violation, or a spec value the cluster's
 *   policy refuses). The App is Stalled until its generation changes.
 * - TooLarge: the render exceeds a limit plumb sets (objects per App). Stalled, like InvalidSpec.
 * - InvalidManifest: a file in the source does not parse or is not a Kubernetes object.
 * - Refused: an object the cluster's policy refuses (namespace, cluster-scoped kind, duplicate).
 * - RenderError: the renderer (an engine) failed on this input.
 * Those three need a new revision of the source; they are not Stalled (the source may move).
 * - InvalidRequest: an HTTP request body (webhook, API call) is malformed; answered 400.
 */
export type IssueCode =
  | "InvalidSpec"
  | "TooLarge"
  | "InvalidManifest"
  | "Refused"
  | "RenderError"
  | "InvalidRequest";

/** One problem with an input, located by path ("spec.source.git.url" or "deploy.yaml:12"). */
export interface Issue {
  code: IssueCode;
  path: string;
  message: string;
}

/** True when some issue needs a change to the App's spec (see IssueCode). */
export function needsSpecChange(issues: readonly Issue[]): boolean {
  return issues.some((i) => i.code === "InvalidSpec" || i.code === "TooLarge");
}

/** Formats issues for a person: "spec.source: exactly one of ...; spec.interval: ...". */
export function formatIssues(issues: readonly Issue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join("; ");
}
