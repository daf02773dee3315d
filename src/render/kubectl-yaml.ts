// YAML read the way `kubectl apply` reads it: sigs.k8s.io/yaml over go-yaml v2 (YAML 1.1
// scalars), then the JSON object kubectl sends. The `yaml` library parses; this module gives it
// go-yaml v2's scalar rules and turns its nodes into JSON values with go-yaml's map semantics.
import {
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  type Node,
  type ParseOptions,
  type Scalar,
  type ScalarTag,
  type SchemaOptions,
  type Tags,
  visit,
} from "yaml";

const TAG = "tag:yaml.org,2002:";

/** A document that kubectl would refuse, or that plumb cannot carry exactly; `offset` in the file. */
export class YamlValueError extends Error {
  readonly offset: number;
  constructor(message: string, offset: number) {
    super(message);
    this.name = "YamlValueError";
    this.offset = offset;
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** What strconv.ParseInt(s, 0, 64) and ParseUint accept once go-yaml removed every "_". */
const GO_INT = /^([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/;
/** go-yaml v2's yamlStyleFloat, tried on the same "_"-less text. */
const GO_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** A float starting with ".": Go's ParseFloat on the text as written ("_" only between digits). */
const GO_DOT_FLOAT = /^\.[0-9](_?[0-9])*([eE][-+]?[0-9](_?[0-9])*)?$/;

/**
 * go-yaml v2 (resolve.go `resolve`) for a plain scalar starting with a digit, a sign or ".",
 * after the null/bool/.inf/.nan tables: "_" is dropped, then an int64 (bigint), a uint64
 * (bigint), a float64 (number, when finite), else the text. So `0400` is 256, `0o400`, `0x1F`
 * and `0b11` are ints, `08` is the float 8, `1e400` (out of range) and `1:20` stay strings.
 * Timestamps resolve to their text for untyped targets, sexagesimal is not supported.
 */
export function goNumber(text: string): bigint | number | string {
  if (text.startsWith(".")) {
    const f = GO_DOT_FLOAT.test(text) ? Number(text.replaceAll("_", "")) : Number.NaN;
    return Number.isFinite(f) ? f : text;
  }
  const plain = text.replaceAll("_", "");
  const m = GO_INT.exec(plain);
  if (m) {
    const digits = m[2] ?? "";
    const octal = digits.length > 1 && digits[0] === "0" && /^[0-7]+$/.test(digits);
    const magnitude = BigInt(octal ? `0o${digits.slice(1)}` : digits.toLowerCase());
    const value = m[1] === "-" ? -magnitude : magnitude;
    if (value >= INT64_MIN && value <= INT64_MAX) return value;
    if (m[1] === "" && value <= UINT64_MAX) return value;
  }
  if (GO_FLOAT.test(plain)) {
    const f = Number(plain);
    if (Number.isFinite(f)) return f;
  }
  return text;
}

/** The value go-yaml v2 gives an untagged plain scalar (what an explicit `!!int` etc. checks). */
function resolvePlain(text: string, tags: readonly ScalarTag[]): unknown {
  for (const tag of tags) {
    if (tag.default === true && tag.test?.test(text)) {
      const value: unknown = tag.resolve(text, () => {}, {});
      return isScalar(value) ? value.value : value;
    }
  }
  return text;
}

/**
 * go-yaml v2's scalar tags on top of the `yaml` library's YAML 1.1 schema: its null, bool,
 * .inf/.nan and merge tags match go-yaml's tables and are kept; ints and floats follow
 * {@link goNumber}; timestamps, sexagesimal numbers, !!set, !!omap and !!pairs are dropped
 * (go-yaml leaves those plain strings and collections). Explicit core tags (`!!int "0400"`)
 * resolve as go-yaml does, refusing a value of another type.
 */
function goYamlTags(tags: Tags): Tags {
  const objects = tags.filter((t) => typeof t !== "string");
  const named = (name: string) => objects.filter((t) => t.tag === `${TAG}${name}`);
  const nan = named("float").filter((t) => t.test?.test(".nan") === true) as ScalarTag[];
  const scalars = [...named("null"), ...named("bool"), ...named("merge")] as ScalarTag[];
  const number: ScalarTag = {
    tag: `${TAG}int`,
    default: true,
    test: /^[-+0-9.]/,
    identify: (v) => typeof v === "bigint",
    resolve: (text) => goNumber(text),
  };
  const implicit: ScalarTag[] = [...scalars, ...nan, number];
  const explicit = (name: string, accept: (v: unknown) => unknown): ScalarTag => ({
    tag: `${TAG}${name}`,
    default: false,
    resolve(text, onError) {
      const value = resolvePlain(text, implicit);
      const out = accept(value);
      if (out === undefined) onError(`cannot decode \`${text}\` as a !!${name}`);
      return out === undefined ? text : (out as Scalar.Parsed["value"]);
    },
  });
  const binary: ScalarTag = {
    tag: `${TAG}binary`,
    default: false,
    resolve(text, onError) {
      const b64 = text.replace(/[\r\n]/g, "");
      if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(b64)) {
        onError("!!binary value contains invalid base64 data");
        return text;
      }
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      return new TextDecoder().decode(bytes);
    },
  };
  return [
    explicit("int", (v) => (typeof v === "bigint" ? v : undefined)),
    explicit("float", (v) =>
      typeof v === "bigint" || typeof v === "number" ? Number(v) : undefined,
    ),
    explicit("bool", (v) => (typeof v === "boolean" ? v : undefined)),
    explicit("null", (v) => (v === null ? null : undefined)),
    binary,
    ...named("map"),
    ...named("seq"),
    ...named("str"),
    ...implicit,
  ];
}

/** Options for `parseAllDocuments`: go-yaml v2's YAML 1.1 resolution, duplicates allowed. */
export const KUBECTL_YAML_OPTIONS: ParseOptions & SchemaOptions & { version: "1.1" } = {
  version: "1.1",
  schema: "yaml-1.1",
  customTags: goYamlTags,
  resolveKnownTags: false,
  merge: true,
  uniqueKeys: false,
};

/** Go's strconv.FormatFloat(f, 'g', -1, 32): how sigs.k8s.io/yaml names a float map key. */
export function formatFloat32Key(f: number): string {
  const x = Math.fround(f);
  if (Number.isNaN(x)) return ".nan";
  if (x === Number.POSITIVE_INFINITY) return ".inf";
  if (x === Number.NEGATIVE_INFINITY) return "-.inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const sign = x < 0 ? "-" : "";
  const [digits, exp] = shortestFloat32(Math.abs(x));
  if (exp < -4 || exp >= 6) {
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp).toString().padStart(2, "0");
    return `${sign}${mantissa}e${exp < 0 ? "-" : "+"}${e}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const int = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  const frac = digits.slice(exp + 1);
  return `${sign}${int}${frac ? `.${frac}` : ""}`;
}

/** Fewest significant digits that read back as the same float32, and the decimal exponent. */
function shortestFloat32(x: number): [string, number] {
  for (let p = 1; p <= 9; p++) {
    const rounded = x.toExponential(p - 1);
    const [m = "", e = "0"] = rounded.split("e");
    const digits = m.replace(".", "");
    const exp = Number(e);
    // The correctly rounded candidate, then its neighbours (intervals are lopsided at powers of 2).
    const candidates = [0n, 1n, -1n].map((d) => {
      const n = BigInt(digits) + d;
      return { n, value: Number(`${n}e${exp - p + 1}`) };
    });
    const fits = candidates.filter((c) => c.n > 0n && Math.fround(c.value) === x);
    fits.sort((a, b) => Math.abs(a.value - x) - Math.abs(b.value - x));
    const best = fits[0];
    if (best) {
      const s = best.n.toString();
      // 9.99e2 + 1 in the last digit = 10.00e2: one more digit, one more power of ten.
      return [s.replace(/0+$/, "") || "0", exp + (s.length - p)];
    }
  }
  const [m = "", e = "0"] = x.toExponential(8).split("e");
  return [m.replace(".", "").replace(/0+$/, ""), Number(e)];
}

const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$/;

/** Sets an own property, "__proto__" included, overwriting an earlier value. */
function setKey(out: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

/** How many nodes alias expansion may produce in one document (the "billion laughs" bound). */
export const MAX_ALIAS_NODES = 100_000;

/**
 * The JSON value kubectl would send for a parsed document (parsed with
 * {@link KUBECTL_YAML_OPTIONS}), after sigs.k8s.io/yaml's YAMLToJSON and apimachinery's
 * unstructured decoding:
 * - map keys become strings as YAMLToJSON does: `on:` → "true", `0400:` → "256", float keys in
 *   Go's float32 'g' form (`1e6:` → "1e+06"); null, uint64 and collection keys are errors;
 * - merge keys (`<<`) and duplicate keys follow go-yaml v2: entries are written in document
 *   order, each overwriting what was there, so the last duplicate wins and a merge overwrites
 *   keys written before it; in a list of merges the first map wins;
 * - .inf and .nan values are errors (JSON cannot carry them), as with kubectl;
 * - an integer in int64 range that JavaScript cannot print back exactly (beyond 2^53) is an
 *   error: plumb would send a different number. Integers beyond int64 are floats, as kubectl's
 *   decoding makes them, and -0 is 0.
 * With `json` (the file is one JSON text, which kubectl decodes as JSON), a number out of
 * float64 range is an error as in Go's JSON decoder, where YAML would read it as text.
 * @throws YamlValueError with the offset of the offending node.
 */
export function documentToJson(doc: Document.Parsed, opts: { json?: boolean } = {}): unknown {
  const targets = new Map<Node, Node | undefined>();
  const anchors = new Map<string, Node>();
  visit(doc, {
    Node(_, node) {
      if (isAlias(node)) targets.set(node, anchors.get(node.source));
      else if (node.anchor) anchors.set(node.anchor, node);
    },
  });
  let expanded = 0;
  const active = new Set<Node>();
  const at = (node: Node | null | undefined) => node?.range?.[0] ?? doc.range[0];

  const convert = (node: unknown, viaAlias: boolean): unknown => {
    if (node === null || node === undefined) return null;
    if (viaAlias && ++expanded > MAX_ALIAS_NODES) {
      throw new YamlValueError("document contains excessive aliasing", at(node as Node));
    }
    if (isAlias(node)) {
      const target = targets.get(node);
      if (!target) throw new YamlValueError(`unknown anchor '${node.source}' referenced`, at(node));
      if (active.has(target)) {
        throw new YamlValueError(`anchor '${node.source}' value contains itself`, at(node));
      }
      return convert(target, true);
    }
    if (isScalar(node)) return scalarValue(node);
    active.add(node as Node);
    try {
      if (isSeq(node)) return node.items.map((item) => convert(item, viaAlias));
      if (isMap(node)) {
        const out: Record<string, unknown> = {};
        for (const pair of node.items) {
          const key = pair.key as Node | null;
          const keyNode = isAlias(key) ? (targets.get(key) ?? key) : key;
          if (isScalar(keyNode) && typeof keyNode.value === "symbol") {
            merge(out, pair.value as Node | null, viaAlias);
            continue;
          }
          setKey(out, mapKey(keyNode), convert(pair.value, viaAlias));
        }
        return out;
      }
    } finally {
      active.delete(node as Node);
    }
    throw new YamlValueError("unsupported YAML node", at(node as Node));
  };

  const merge = (out: Record<string, unknown>, value: Node | null, viaAlias: boolean) => {
    const source = isAlias(value) ? targets.get(value) : value;
    const maps = isSeq(source) && !isAlias(value) ? [...source.items].reverse() : [value];
    for (const item of maps) {
      const target = isAlias(item) ? targets.get(item) : item;
      if (!isMap(target)) {
        throw new YamlValueError(
          "map merge requires map or sequence of maps as the value",
          at((item as Node | null) ?? value),
        );
      }
      for (const [k, v] of Object.entries(convert(item, viaAlias) as Record<string, unknown>)) {
        setKey(out, k, v);
      }
    }
  };

  const mapKey = (key: Node | null): string => {
    if (isScalar(key)) {
      const v = key.value;
      if (typeof v === "string") return v;
      if (typeof v === "boolean") return String(v);
      if (typeof v === "number") return formatFloat32Key(v);
      if (typeof v === "bigint" && v <= INT64_MAX) return v.toString();
      if (typeof v === "bigint") {
        throw new YamlValueError(`unsupported map key ${v} (beyond int64)`, at(key));
      }
      throw new YamlValueError("unsupported map key: null", at(key));
    }
    if (key === null) throw new YamlValueError("unsupported map key: null", doc.range[0]);
    throw new YamlValueError("invalid map key: a map or a list", at(key));
  };

  const scalarValue = (node: Scalar): unknown => {
    const v = node.value;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) {
        throw new YamlValueError(
          `${node.source ?? v} has no JSON form (kubectl refuses it too)`,
          at(node),
        );
      }
      return v === 0 ? 0 : v;
    }
    if (typeof v === "bigint") {
      if (v > INT64_MAX) return Number(v);
      const n = Number(v);
      if (String(n) !== v.toString()) {
        throw new YamlValueError(
          `integer ${v} is beyond 2^53: plumb cannot send it exactly (quote it if it is a string)`,
          at(node),
        );
      }
      return n;
    }
    if (opts.json && node.type === "PLAIN" && typeof v === "string" && JSON_NUMBER.test(v)) {
      throw new YamlValueError(`number ${v} is out of range (kubectl refuses it too)`, at(node));
    }
    return v;
  };

  return convert(doc.contents, false);
}
