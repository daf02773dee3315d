// Shared types and readers for the health rules. Live objects are untyped JSON, so every
// field is read defensively: a missing or mistyped field reads as its Kubernetes default.
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

/** `v` when it is an array, else an empty array. */
export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
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
