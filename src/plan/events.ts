// Events a run emits on its App (kubectl describe app shows them).
import type { EventReason } from "../core/index.ts";

/** A core/v1 Event about the App: Normal for what happened, Warning for what went wrong. */
export interface RunEvent {
  type: "Normal" | "Warning";
  reason: EventReason;
  message: string;
}
