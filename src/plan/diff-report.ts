// `plumb diff`: what applying a revision would create, change and prune, as a report (the JSON
// shape of `-o json`) and as text, one unified diff per object like `kubectl diff`, with a
// size cap so a pull-request comment can carry it. Built from the held preview's comparison
// (compare.ts, preview.ts) and the dry runs behind it. Pure.
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from "diff";
import { stringify } from "yaml";
import type { FieldChange, ResourceStatus } from "../app/index.ts";
import {
  isRecord,
  type KubeObject,
  maskSecretValues,
  type ObjectRef,
  refKey,
  shortRevision,
} from "../core/index.ts";
import { previewOf } from "./preview.ts";

/** What applying would do to one object. */
export type DiffAction = "create" | "change" | "prune" | "fail";

/** One object of a diff report. */
export interface DiffEntry extends ObjectRef {
  action: DiffAction;
  /** change: each field with its live and desired value (a v1 Secret's: path only). */
  fields?: FieldChange[];
  /** fail: the API server's answer to the dry run (applying would fail the same way). */
  message?: string;
  /**
   * The object's unified diff, live (`--- a/…`, /dev/null when created) to desired (`+++ b/…`,
   * /dev/null when pruned): the server's dry-run result against the live object, without
   * status and server-set metadata, a Secret's values masked. "" for fail.
   */
  diff: string;
}

/** `plumb diff -o json`: what applying `revision` to App `app` would do. */
export interface DiffReport {
  /** "namespace/name". */
  app: string;
  /** The revision rendered: a commit SHA, digest, chart version, or "local:<dir>". */
  revision: string;
  /** Objects per action. */
  counts: Record<DiffAction, number>;
  /** In status.resources order (refKey): created, changed, pruned and failing objects only. */
  objects: DiffEntry[];
}

export interface DiffInput {
  app: string;
  revision: string;
  /** The held comparison's lines (compareDesired with held: "will be created", …). */
  resources: readonly ResourceStatus[];
  /** The rendered objects, by refKey. */
  desired: ReadonlyMap<string, KubeObject>;
  /** The live objects, by refKey. */
  live: ReadonlyMap<string, KubeObject>;
  /** The server-side-apply dry run of each object the comparison confirmed, by refKey. */
  dryRuns: ReadonlyMap<string, KubeObject>;
}

/**
 * The report of a held comparison: each line the preview reads (previewOf) becomes an entry
 * with its unified diff, in the lines' order. A changed object whose dry run is missing
 * (cannot happen: a change comes from one) is diffed against its rendered form.
 */
export function diffReport(input: DiffInput): DiffReport {
  const preview = previewOf(input.resources);
  const order = new Map(input.resources.map((r, i) => [refKey(r), i]));
  const objects: DiffEntry[] = [
    ...preview.create.map((ref) => entry(ref, "create", undefined, input.desired.get(refKey(ref)))),
    ...preview.change.map(({ fields: _paths, changes, ...ref }) => ({
      ...entry(
        ref,
        "change",
        input.live.get(refKey(ref)),
        input.dryRuns.get(refKey(ref)) ?? input.desired.get(refKey(ref)),
      ),
      fields: changes,
    })),
    ...preview.prune.map((ref) => entry(ref, "prune", input.live.get(refKey(ref)), undefined)),
    ...preview.fail.map(({ message, ...ref }) => ({
      ...ref,
      action: "fail" as const,
      message,
      diff: "",
    })),
  ].sort((a, b) => (order.get(refKey(a)) ?? 0) - (order.get(refKey(b)) ?? 0));
  const counts = { create: 0, change: 0, prune: 0, fail: 0 };
  for (const o of objects) counts[o.action]++;
  return { app: input.app, revision: input.revision, counts, objects };
}

/** Whether applying would change anything (the exit code 1 of `plumb diff`). */
export function hasChanges(report: DiffReport): boolean {
  return report.objects.length > 0;
}

/** How the report reads in one line: "2 to create, 1 to change, 0 to prune" (and failures). */
export function diffSummary(report: DiffReport): string {
  const { create, change, prune, fail } = report.counts;
  if (report.objects.length === 0) return "no changes";
  const parts = [`${create} to create`, `${change} to change`, `${prune} to prune`];
  if (fail > 0) parts.push(`${fail} refused by the API server`);
  return parts.join(", ");
}

/**
 * The report as text: a first line "ns/name at <revision>: <summary>", then each object's
 * unified diff (a failing object: "! Kind ns/name: <message>"), whole objects only, while the
 * text stays within `maxChars` (default: no cap). Objects left out are counted in a last line
 * "… N more objects left out (plumb diff shows them all)" and in `omitted`, so a pull-request
 * comment (GitHub caps a comment at 65 536 characters) can say what it does not show.
 */
export function formatDiff(
  report: DiffReport,
  options: { maxChars?: number } = {},
): { text: string; omitted: number } {
  const max = options.maxChars ?? Number.POSITIVE_INFINITY;
  const head = `${report.app} at ${displayRevision(report.revision)}: ${diffSummary(report)}\n`;
  let text = head;
  let shown = 0;
  for (const o of report.objects) {
    const part = o.action === "fail" ? `! ${describe(o)}: ${o.message ?? "refused"}\n` : o.diff;
    const rest = report.objects.length - shown - 1;
    // Room is kept for the line that counts what is left out.
    const reserve = rest > 0 ? omittedLine(rest + 1).length : 0;
    if (text.length + part.length + reserve > max) break;
    text += part;
    shown++;
  }
  const omitted = report.objects.length - shown;
  if (omitted > 0) text += omittedLine(omitted);
  return { text, omitted };
}

function omittedLine(n: number): string {
  return `… ${n} more object${n === 1 ? "" : "s"} left out (plumb diff shows them all)\n`;
}

function displayRevision(revision: string): string {
  return revision.startsWith("local:") ? revision : shortRevision(revision);
}

function describe(ref: ObjectRef): string {
  return ref.namespace ? `${ref.kind} ${ref.namespace}/${ref.name}` : `${ref.kind} ${ref.name}`;
}

/** "apps/v1/Deployment/ns/web" ("v1/Namespace/web"): the object's name in a diff header. */
function diffPath(ref: ObjectRef): string {
  return [ref.apiVersion, ref.kind, ref.namespace, ref.name].filter((p) => p).join("/");
}

function entry(
  ref: ObjectRef,
  action: DiffAction,
  live: KubeObject | undefined,
  desired: KubeObject | undefined,
): DiffEntry {
  return { ...ref, action, diff: unifiedDiff(ref, live, desired) };
}

/**
 * The unified diff of one object, live to desired (either absent: /dev/null), 3 lines of
 * context, each side shown by {@link comparableYaml} after masking a Secret's values.
 */
export function unifiedDiff(
  ref: ObjectRef,
  live: KubeObject | undefined,
  desired: KubeObject | undefined,
): string {
  const [l, d] = maskSecretValues([live, desired] as Array<Record<string, unknown> | undefined>);
  const path = diffPath(ref);
  const before = l ? comparableYaml(l) : "";
  const after = d ? comparableYaml(d) : "";
  return createTwoFilesPatch(
    live ? `a/${path}` : "/dev/null",
    desired ? `b/${path}` : "/dev/null",
    before,
    after,
    undefined,
    undefined,
    { context: 3, headerOptions: FILE_HEADERS_ONLY },
  );
}

/** Metadata fields a diff shows; the rest (uid, resourceVersion, managedFields…) is the server's. */
const SHOWN_METADATA = ["name", "namespace", "labels", "annotations"];

/**
 * An object as a diff shows it: YAML with apiVersion, kind and metadata first (name,
 * namespace, labels, annotations only), then the other fields but status, every map's keys
 * sorted so two forms of an object line up. Long strings are never folded.
 */
export function comparableYaml(obj: Record<string, unknown>): string {
  const { apiVersion, kind, metadata, status: _status, ...rest } = obj;
  const meta: Record<string, unknown> = {};
  if (isRecord(metadata)) {
    for (const k of SHOWN_METADATA) if (metadata[k] !== undefined) meta[k] = sorted(metadata[k]);
  }
  const shown: Record<string, unknown> = { apiVersion, kind, metadata: meta };
  for (const k of Object.keys(rest).sort()) shown[k] = sorted(rest[k]);
  return stringify(shown, { lineWidth: 0, aliasDuplicateObjects: false });
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) out[k] = sorted(value[k]);
  return out;
}
