// Manifest parsing: YAML/JSON files from a source to plain objects, with file and line for errors.
import { LineCounter, parseAllDocuments } from "yaml";
import {
  err,
  type Issue,
  isRecord,
  type KubeObject,
  ok,
  type Result,
  type SourceFile,
} from "../core/index.ts";

/** An object parsed from a file, with where it came from (for error messages). */
export interface ParsedObject {
  object: KubeObject;
  /** "path/to/file.yaml:12" (1-based line of the document's start). */
  origin: string;
}

/**
 * Parses every document of every file. Multi-document YAML, `---` with trailing spaces,
 * empty and comment-only documents (skipped), anchors and merge keys (`<<`) resolved;
 * JSON files are YAML 1.2 too. A `v1/List` is expanded into its items.
 * Any document that fails to parse, or is not an object with apiVersion, kind and
 * metadata.name, fails the whole result (all issues listed, code InvalidManifest, `path` =
 * "file:line"), so
 * that a broken commit never renders a partial set (and so never prunes).
 */
export function parseManifests(files: readonly SourceFile[]): Result<ParsedObject[], Issue[]> {
  const objects: ParsedObject[] = [];
  const issues: Issue[] = [];
  for (const file of files) {
    const lines = new LineCounter();
    const docs = parseAllDocuments(file.content, {
      lineCounter: lines,
      merge: true,
      uniqueKeys: true,
    });
    const list = Array.isArray(docs) ? docs : [docs];
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
      let value: unknown;
      try {
        value = doc.toJS({ maxAliasCount: 1000 });
      } catch (err) {
        issues.push({
          code: "InvalidManifest",
          path: at(doc.range[0]),
          message: err instanceof Error ? err.message : String(err),
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

function firstLine(message: string): string {
  return message.split("\n")[0] ?? message;
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
