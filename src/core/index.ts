// The shared vocabulary of every layer: object types and identity, errors, results, condition
// reasons, canonical JSON, redaction of secret values. Imports nothing else of plumb's.
export * from "./budget.ts";
export * from "./dns.ts";
export * from "./errors.ts";
export * from "./json.ts";
export * from "./names.ts";
export * from "./object.ts";
export * from "./patterns.ts";
export * from "./reasons.ts";
export * from "./redact.ts";
export * from "./refs.ts";
export * from "./result.ts";
export * from "./revisions.ts";
