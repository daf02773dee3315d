// Shared types and readers for the health rules. Live objects are untyped JSON, so every
// field is read defensively, metadata included: a missing or mistyped field reads as its
// Kubernetes default, never as an exception.
import type { HealthStatus } from "../app/schema.ts";
import type { KubeObject } from "../core/index.ts";

/** Health of one object: a status and, when there is something to say, why. */
export interface HealthResult {
  status: HealthStatus;
  message?: string;
}

/** Health rule for one kind: pure, given the live object and the current time. */
export type Rule = (obj: KubeObject, now: Date) => HealthResult;

/** A status condition as most Kubernetes types write it (metav1.Condition and the older shapes). */
export interface Cond {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
  /** lastTransitionTime in ms since the epoch, when given and valid. */
  since?: number;
}

type Json = Record<string, unknown>;

/** A HealthResult, leaving `message` out when empty (exactOptionalPropertyTypes). */
export function result(status: HealthStatus, message?: string): HealthResult {
  return message ? { status, message } : { status };
}

/** `v` when it is a JSON object, else an empty object. */
export function obj(v: unknown): Json {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : {};
}

/** `v` when it is an array (dense: holes read as undefined), else an empty array. */
export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? Array.from(v) : [];
}

/** `v` when it is a finite number, else `fallback`. */
export function num(v: unknown, fallback: number): number {
  return typeof v === "number" && Number.isFinite(v) ? v : fallback;
}

/** `v` when it is a non-empty string, else undefined. */
export function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** The object's `spec`. */
export function specOf(o: KubeObject): Json {
  return obj(o["spec"]);
}

/** The object's `status`. */
export function statusOf(o: KubeObject): Json {
  return obj(o["status"]);
}

/** The object's `metadata` (empty when missing or not an object). */
export function metaOf(o: KubeObject): Json {
  return obj((o as { metadata?: unknown }).metadata);
}

/** metadata.name, or "?" when missing. */
export function nameOf(o: KubeObject): string {
  return str(metaOf(o)["name"]) ?? "?";
}

/** metadata.generation when it is a number. */
export function generationOf(o: KubeObject): number | undefined {
  const g = metaOf(o)["generation"];
  return typeof g === "number" && Number.isFinite(g) ? g : undefined;
}

/** metadata.annotations[key] when it is a non-empty string. */
export function annotation(o: KubeObject, key: string): string | undefined {
  return str(obj(metaOf(o)["annotations"])[key]);
}

/** A time in milliseconds since the epoch from an RFC 3339 string, or undefined. */
export function timeOf(v: unknown): number | undefined {
  const t = typeof v === "string" ? Date.parse(v) : Number.NaN;
  return Number.isNaN(t) ? undefined : t;
}

/** Parses a list of conditions, dropping entries without a type. */
export function parseConditions(list: unknown): Cond[] {
  const out: Cond[] = [];
  for (const item of arr(list)) {
    const c = obj(item);
    const type = str(c["type"]);
    if (!type) continue;
    const cond: Cond = { type, status: str(c["status"]) ?? "Unknown" };
    const reason = str(c["reason"]);
    const message = str(c["message"]);
    if (reason) cond.reason = reason;
    if (message) cond.message = message;
    if (typeof c["observedGeneration"] === "number") {
      cond.observedGeneration = c["observedGeneration"];
    }
    const since = timeOf(c["lastTransitionTime"]);
    if (since !== undefined) cond.since = since;
    out.push(cond);
  }
  return out;
}

/** `status.conditions` of the object. */
export function conditionsOf(o: KubeObject): Cond[] {
  return parseConditions(statusOf(o)["conditions"]);
}

/** The condition of `type`, if present. */
export function findCondition(conds: readonly Cond[], type: string): Cond | undefined {
  return conds.find((c) => c.type === type);
}

/** True when a condition of `type` has status `status`. */
export function hasCondition(conds: readonly Cond[], type: string, status: string): boolean {
  return conds.some((c) => c.type === type && c.status === status);
}

/** "Reason: message", "message" or "Reason", whichever the condition has; else its type. */
export function describe(c: Cond): string {
  if (c.reason && c.message) return `${c.reason}: ${c.message}`;
  return c.message ?? c.reason ?? c.type;
}

/**
 * Progressing when `c` (a metav1.Condition) was written for an older metadata.generation than
 * the object's: its verdict is about a spec the controller has not seen yet.
 */
export function staleCondition(o: KubeObject, c: Cond | undefined): HealthResult | undefined {
  const generation = generationOf(o);
  if (c?.observedGeneration === undefined || generation === undefined) return undefined;
  if (c.observedGeneration >= generation) return undefined;
  return result("Progressing", `waiting for the controller to observe generation ${generation}`);
}

/** "1 replica" / "2 replicas". */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** A coarse age: "45s", "5m", "3h", "2d". */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}
