// What an apply's error means for the run: a short message for status (never the API server's
// object dump), whether retrying the same render can help, and which fields are immutable. Pure.
import { ANNOTATION_RECREATE } from "../app/index.ts";
import { KubeApiError, refusedBody } from "../core/index.ts";

export interface ApplyError {
  /** For status.resources, the Ready/Stalled conditions and the Warning Event. */
  message: string;
  /**
   * The same render fails again whatever the schedule does: the API server found the object
   * invalid (422), or it does not fit the kind's schema. Stalled until the render changes.
   */
  terminal: boolean;
  /** Fields the API server refused because they cannot change after creation. */
  immutable: string[];
}

/** Causes that name a field that cannot change (Jobs, selectors, Services, PVCs, StatefulSets). */
const IMMUTABLE = /immutable|updates to .* are forbidden/i;

/**
 * Reads an apply's error:
 * - 422 Invalid with causes naming immutable fields → "spec.template is immutable; set the
 *   annotation plumb.dev/recreate: "true" on it to delete and recreate it", terminal;
 * - any other 422 → "invalid: field: detail; ...", terminal;
 * - a 500 that refuses the body ("failed to create typed patch object": a field the schema
 *   lacks, a number where a string belongs; "failed to convert new object": bad base64 in a
 *   Secret's data; {@link refusedBody}) → terminal;
 * - anything else → its message, retried with backoff.
 * For a Secret (`opts.secret`) a refused value or a schema error ("expected string, got
 * ...Value:...") may quote the Secret's data: the message goes through `opts.redact` (the run's
 * redactor, which holds the rendered Secrets' values), and without one no message of
 * the API server's is kept — only the status, the reason and the refused fields' paths.
 */
export function readApplyError(
  error: unknown,
  opts: { secret?: boolean; redact?: ((text: string) => string) | undefined } = {},
): ApplyError {
  if (opts.secret) {
    const read = readApplyError(error);
    if (opts.redact) return { ...read, message: opts.redact(read.message) };
    if (!(error instanceof KubeApiError)) return { ...read, message: "the apply failed" };
    const fields = [...new Set(error.causes.map((c) => c.field).filter((f) => f !== undefined))];
    const refused =
      read.immutable.length > 0 ? read.message : `HTTP ${error.status} ${error.reason}`;
    return {
      ...read,
      message:
        fields.length > 0 && read.immutable.length === 0
          ? `${refused}: ${fields.join(", ")}`
          : refused,
    };
  }
  if (!(error instanceof KubeApiError)) {
    return {
      message: error instanceof Error ? error.message : String(error),
      terminal: false,
      immutable: [],
    };
  }
  if (error.status === 422) {
    const immutable = error.causes
      .filter((c) => IMMUTABLE.test(c.message ?? ""))
      .map((c) => c.field ?? "(object)");
    if (immutable.length > 0) {
      const fields = [...new Set(immutable)];
      return {
        message: `${fields.join(", ")} ${fields.length > 1 ? "are" : "is"} immutable; set the annotation ${ANNOTATION_RECREATE}: "true" on it to delete and recreate it`,
        terminal: true,
        immutable: fields,
      };
    }
    const causes = error.causes.map((c) =>
      c.field ? `${c.field}: ${c.message ?? ""}` : (c.message ?? ""),
    );
    return {
      message: causes.length > 0 ? `invalid: ${causes.join("; ")}` : error.message,
      terminal: true,
      immutable: [],
    };
  }
  const schema = refusedBody(error.status, error.reason, error.message);
  return { message: error.message, terminal: schema, immutable: [] };
}
