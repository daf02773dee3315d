// Manifest parsing: YAML/JSON files from a source to plain objects, with file and line for errors.
import { type Document, LineCounter, parseAllDocuments } from "yaml";
import {
  err,
  type Issue,
  isRecord,
  type KubeObject,
  ok,
  type Result,
  type SourceFile,
} from "../core/index.ts";
import { documentToJson, KUBECTL_YAML_OPTIONS, YamlValueError } from "./kubectl-yaml.ts";

/** An object parsed from a file, with where it came from (for error messages). */
export interface ParsedObject {
  object: KubeObject;
  /** "path/to/file.yaml:12" (1-based line of the document's start). */
  origin: string;
}

/**
 * Parses every document of every file the way `kubectl apply` does (kubectl-yaml.ts: YAML 1.1
 * scalars of go-yaml v2, so `mode: 0440` is 288 and `on:` is the key "true"; duplicate keys:
 * the last wins; merge keys `<<`). Multi-document YAML, `---` with trailing spaces, empty and
 * comment-only documents (skipped); JSON files are read by the same rules, which agree with
 * JSON for every valid JSON document. A `v1/List` is expanded into its items.
 * Any document that fails to parse, holds a value kubectl refuses (.inf, a null key) or one
 * plumb cannot send exactly (an integer beyond 2^53), starts with a directive (`%YAML`, which
 * kubectl's document splitter cannot read either), or is not an object with apiVersion, kind
 * and metadata.name, fails the whole result (all issues listed, code InvalidManifest, `path` =
 * "file:line"), so that a broken commit never renders a partial set (and so never prunes).
 * A document over MAX_DOCUMENT_BYTES is refused (TooLarge) before it is parsed.
 */
export function parseManifests(files: readonly SourceFile[]): Result<ParsedObject[], Issue[]> {
  const objects: ParsedObject[] = [];
  const issues: Issue[] = [];
  for (const file of files) {
    // Checked on the text before the YAML parser builds its tree: the tree of a 14 MB document
    // costs well over a gigabyte, for an object the API server would refuse anyway.
    const big = oversizedDocument(file.content, MAX_DOCUMENT_BYTES);
    if (big) {
      issues.push({
        code: "TooLarge",
        path: `${file.path}:${big.line}`,
        message: `a document of ${big.bytes} bytes is over the ${MAX_DOCUMENT_BYTES}-byte (3 MiB) cap on one object (kube-apiserver's default --max-request-bytes; etcd stores at most 1.5 MiB): it could never be applied`,
      });
      continue;
    }
    const lines = new LineCounter();
    const docs = parseAllDocuments(file.content, { ...KUBECTL_YAML_OPTIONS, lineCounter: lines });
    const list = Array.isArray(docs) ? docs : [docs];
    const json = isJsonText(file.content);
    for (const doc of list) {
      const at = (offset: number) => `${file.path}:${lines.linePos(offset).line}`;
      const first = doc.errors[0];
      if (first) {
        // The first error of a document; the ones after it are usually its echoes.
        issues.push({
          code: "InvalidManifest",
          path: at(first.pos[0]),
          message: firstLine(first.message),
        });
        continue;
      }
      if (hasDirective(doc.directives)) {
        issues.push({
          code: "InvalidManifest",
          path: at(doc.range[0]),
          message: "YAML directives (%YAML, %TAG) are not supported (kubectl cannot read them)",
        });
        continue;
      }
      let value: unknown;
      try {
        value = documentToJson(doc, { json });
      } catch (e) {
        issues.push({
          code: "InvalidManifest",
          path: at(e instanceof YamlValueError ? e.offset : doc.range[0]),
          message: firstLine(e instanceof Error ? e.message : String(e)),
        });
        continue;
      }
      if (value === null || value === undefined) continue;
      const origin = at(doc.contents?.range?.[0] ?? doc.range[0]);
      for (const item of expandList(value)) {
        const problem = checkShape(item);
        if (problem) issues.push({ code: "InvalidManifest", path: origin, message: problem });
        else objects.push({ object: item as KubeObject, origin });
      }
    }
  }
  return issues.length > 0 ? err(issues) : ok(objects);
}

/**
 * Cap on the text of one YAML/JSON document, bytes (UTF-16 code units of the text, which is
 * never more than its UTF-8 bytes): kube-apiserver's default `--max-request-bytes` is 3 MiB,
 * so no larger object can be created or applied (etcd's own default cap is 1.5 MiB).
 */
export const MAX_DOCUMENT_BYTES = 3 * 1024 * 1024;

/** A document start (`---`) or end (`...`) marker: at column 0, then a blank or the line's end. */
const DOCUMENT_MARKER = /^(?:---|\.\.\.)(?=[ \t\r\n]|$)/gm;

/**
 * The first document of `text` longer than `max`, with its 1-based first line and its length,
 * found by splitting at document markers without parsing. YAML 1.2 forbids a marker at column 0
 * inside any scalar (c-forbidden, spec 9.1.4), so each marker is a real boundary.
 * @returns undefined when every document is within `max`
 */
export function oversizedDocument(
  text: string,
  max: number,
): { line: number; bytes: number } | undefined {
  if (text.length <= max) return undefined;
  let start = 0;
  const check = (end: number) => (end - start > max ? { start, bytes: end - start } : undefined);
  let hit: { start: number; bytes: number } | undefined;
  for (const m of text.matchAll(DOCUMENT_MARKER)) {
    hit = check(m.index);
    if (hit) break;
    start = m.index;
  }
  hit ??= check(text.length);
  if (!hit) return undefined;
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < hit.start; i = text.indexOf("\n", i + 1)) line++;
  return { line, bytes: hit.bytes };
}

/**
 * Objects an engine has already decoded (a Kustomize build), each with its origin, checked as
 * parseManifests checks a document: a `v1/List` is expanded, and anything that is not an
 * object with apiVersion, kind and metadata.name fails the whole result (InvalidManifest,
 * `path` = the origin); so does an object over MAX_DOCUMENT_BYTES as JSON (TooLarge).
 */
export function decodedObjects(
  values: ReadonlyArray<{ origin: string; value: unknown }>,
): Result<ParsedObject[], Issue[]> {
  const objects: ParsedObject[] = [];
  const issues: Issue[] = [];
  for (const { origin, value } of values) {
    if (value === null || value === undefined) continue;
    for (const item of expandList(value)) {
      const problem = checkShape(item);
      // The engine's output is already capped in all (MAX_RENDER_OUTPUT_BYTES), so measuring
      // one object as JSON costs at most that much once.
      const bytes = problem ? 0 : JSON.stringify(item).length;
      if (problem) issues.push({ code: "InvalidManifest", path: origin, message: problem });
      else if (bytes > MAX_DOCUMENT_BYTES) {
        issues.push({
          code: "TooLarge",
          path: origin,
          message: `an object of ${bytes} bytes (as JSON) is over the ${MAX_DOCUMENT_BYTES}-byte (3 MiB) cap on one object (kube-apiserver's default --max-request-bytes; etcd stores at most 1.5 MiB): it could never be applied`,
        });
      } else objects.push({ object: item as KubeObject, origin });
    }
  }
  return issues.length > 0 ? err(issues) : ok(objects);
}

/** kubectl decodes a stream that starts with "{" as JSON when it is JSON (else as YAML). */
function isJsonText(content: string): boolean {
  if (!content.trimStart().startsWith("{")) return false;
  try {
    JSON.parse(content);
    return true;
  } catch {
    return false;
  }
}

/** A %YAML or %TAG directive in front of the document. */
function hasDirective(directives: Document["directives"]): boolean {
  if (!directives) return false;
  const handles = Object.entries(directives.tags);
  const standard = (h: string, p: string) =>
    (h === "!" && p === "!") || (h === "!!" && p === "tag:yaml.org,2002:");
  return directives.yaml.explicit === true || handles.some(([h, p]) => !standard(h, p));
}

/**
 * The first line of a YAML parser message, as a sentence: the parser ends it with
 * " at line L, column C:" before a code frame; the line is in the issue's path already, so the
 * column is kept in parentheses and no message ends with a dangling colon.
 */
export function firstLine(message: string): string {
  const line = (message.split("\n")[0] ?? message).trim();
  const at = /\s+at line \d+, column (\d+):?$/.exec(line);
  if (at) return `${line.slice(0, at.index)} (column ${at[1]})`;
  return line.replace(/\s*:+$/, "");
}

function expandList(value: unknown): unknown[] {
  if (isRecord(value) && value["apiVersion"] === "v1" && typeof value["kind"] === "string") {
    if (value["kind"].endsWith("List") && Array.isArray(value["items"])) return value["items"];
  }
  return [value];
}

function checkShape(value: unknown): string | undefined {
  if (!isRecord(value)) return "document is not a mapping (expected a Kubernetes object)";
  if (typeof value["apiVersion"] !== "string" || value["apiVersion"] === "")
    return "apiVersion is missing";
  if (typeof value["kind"] !== "string" || value["kind"] === "") return "kind is missing";
  const meta = value["metadata"];
  if (!isRecord(meta) || typeof meta["name"] !== "string" || meta["name"] === "") {
    return `${value["kind"]}: metadata.name is missing (generateName is not supported)`;
  }
  if (meta["namespace"] !== undefined && typeof meta["namespace"] !== "string") {
    return `${value["kind"]} ${meta["name"]}: metadata.namespace must be a string`;
  }
  return undefined;
}
