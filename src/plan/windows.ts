// Sync windows (spec.syncWindows): may a sync run now, and when may it next? Argo CD's rules
// (pkg/apis/application/v1alpha1 SyncWindows.CanSync), with the schedule read in its own time
// zone at every instant (Argo CD applies the zone's offset of the moment, which is off by an
// hour across a DST change). Pure: `now` is given.
import { type CronSchedule, cronSchedule, parseDuration, type SyncWindow } from "../app/index.ts";

/** One window occurrence open at `now`: which window, and when this occurrence closes. */
export interface OpenWindow {
  /** Index in spec.syncWindows. */
  index: number;
  window: SyncWindow;
  /** When this occurrence opened and closes (opened + duration). */
  opened: Date;
  closes: Date;
}

/** Why a sync may not run now: the windows that block it and when it may next. */
export interface WindowBlock {
  /** The active deny windows, or (no deny active) the inactive allow windows. */
  blocking: OpenWindow[] | SyncWindowRef[];
  /** "deny": a deny window is open. "allow": allow windows exist and none is open. */
  cause: "deny" | "allow";
  /** The first instant (within a year) at which the sync may run; absent when none was found. */
  next?: Date;
  /**
   * When `next` is absent: that no opening was found and how far ahead the search looked
   * ("no sync window opens within 366 days"), for status.nextSyncWindowMessage and the API.
   */
  nextMessage?: string;
  /** For status and operation outcomes: names the window(s) and the next opening. */
  message: string;
}

/** A window named by its index (an allow window that is not open has no occurrence). */
export interface SyncWindowRef {
  index: number;
  window: SyncWindow;
}

/**
 * The occurrences of `windows` open at `now`: window i is open when its schedule fired at some
 * t with now − duration < t ≤ now (an occurrence covers [t, t + duration)). Argo CD's
 * SyncWindow.active: schedule.Next(now − duration) before now.
 */
export function openWindows(windows: readonly SyncWindow[], now: Date): OpenWindow[] {
  const open: OpenWindow[] = [];
  windows.forEach((window, index) => {
    const duration = parseDuration(window.duration);
    const fired = scheduleOf(window).next(new Date(now.getTime() - duration));
    if (fired && fired.getTime() <= now.getTime()) {
      open.push({ index, window, opened: fired, closes: new Date(fired.getTime() + duration) });
    }
  });
  return open;
}

/**
 * May a sync run at `now`? Argo CD's CanSync (without syncOverrun, which plumb does not need:
 * a run applies within seconds):
 * - an open deny window blocks, unless the sync is `manual` and every open deny window has
 *   manualSync;
 * - else an open allow window lets it run;
 * - else, when allow windows exist (none open), they block, unless the sync is `manual` and
 *   every allow window has manualSync;
 * - else it runs.
 * @param manual true for an operation (Sync, Deploy, Rollback, Approve), false for automated
 *   sync and selfHeal
 * @returns undefined when the sync may run, else why not and when it may next
 */
export function syncBlocked(
  windows: readonly SyncWindow[] | undefined,
  manual: boolean,
  now: Date,
): WindowBlock | undefined {
  if (!windows || windows.length === 0) return undefined;
  const cause = blockCause(windows, manual, now);
  if (!cause) return undefined;
  const { at: next, searchedUntil } = nextSyncOpening(windows, manual, now);
  const blocking: OpenWindow[] | SyncWindowRef[] =
    cause === "deny"
      ? openWindows(windows, now).filter((o) => o.window.kind === "deny")
      : windows.flatMap((window, index) => (window.kind === "allow" ? [{ index, window }] : []));
  const message = blockMessage(cause, blocking, manual, next ?? searchedUntil, next !== undefined);
  if (next) return { blocking, cause, next, message };
  return { blocking, cause, message, nextMessage: noOpeningMessage(now, searchedUntil) };
}

/**
 * "no sync window opens within 366 days (searched until 2027-12-03T10:00:00.000Z)": the span
 * searched, in whole days (hours, minutes when shorter: a window firing every minute ends the
 * search at its 1,000th opening). Argo CD shows the window state ("Sync Denied") and the
 * matching windows, with no next time (argoproj/argo-cd docs/user-guide/sync_windows.md); plumb
 * says how far it looked instead of leaving the time empty.
 */
export function noOpeningMessage(now: Date, searchedUntil: Date): string {
  const ms = searchedUntil.getTime() - now.getTime();
  const [unit, size] =
    ms >= 86_400_000
      ? ["day", 86_400_000]
      : ms >= 3_600_000
        ? ["hour", 3_600_000]
        : ["minute", 60_000];
  const n = Math.floor(ms / (size as number));
  return `no sync window opens within ${n} ${unit}${n === 1 ? "" : "s"} (searched until ${searchedUntil.toISOString()})`;
}

function blockCause(
  windows: readonly SyncWindow[],
  manual: boolean,
  now: Date,
): "deny" | "allow" | undefined {
  return causeOf(
    windows,
    openWindows(windows, now).map((o) => o.window),
    manual,
  );
}

/** The rule of syncBlocked over the windows open at one instant. */
function causeOf(
  windows: readonly SyncWindow[],
  open: readonly SyncWindow[],
  manual: boolean,
): "deny" | "allow" | undefined {
  const denies = open.filter((w) => w.kind === "deny");
  if (denies.length > 0) return manual && denies.every((w) => w.manualSync) ? undefined : "deny";
  if (open.some((w) => w.kind === "allow")) return undefined;
  const allows = windows.filter((w) => w.kind === "allow");
  if (allows.length === 0) return undefined;
  return manual && allows.every((w) => w.manualSync) ? undefined : "allow";
}

/** How far ahead nextSyncOpening looks, and how many window openings it reads at most. */
const HORIZON_MS = 366 * 24 * 3_600_000;
const MAX_OPENINGS = 1_000;

/** The first allowed instant, or none before `searchedUntil` (a year, or the edge budget). */
export interface NextOpening {
  at: Date | undefined;
  searchedUntil: Date;
}

/**
 * The first instant after `now` at which a sync (automated, or `manual`) may run, looking at
 * most a year or MAX_OPENINGS window openings ahead. A blocked sync can only become allowed
 * when a window opens or closes, so the sweep visits those edges in time order, keeping for
 * each window its latest opening (an occurrence is open while latest + duration > t).
 */
export function nextSyncOpening(
  windows: readonly SyncWindow[],
  manual: boolean,
  now: Date,
): NextOpening {
  const limit = now.getTime() + HORIZON_MS;
  const sweep = windows.map((window) => {
    const duration = parseDuration(window.duration);
    const schedule = scheduleOf(window);
    const opened = schedule.next(new Date(now.getTime() - duration));
    const latest = opened && opened.getTime() <= now.getTime() ? opened.getTime() : undefined;
    return { window, duration, schedule, latest, next: schedule.next(now)?.getTime() };
  });
  let t = now.getTime();
  for (let read = 0; read < MAX_OPENINGS; ) {
    // The next edge: an opening, or the close of a window's latest occurrence.
    let edge = Number.POSITIVE_INFINITY;
    for (const w of sweep) {
      if (w.next !== undefined) edge = Math.min(edge, w.next);
      if (w.latest !== undefined && w.latest + w.duration > t) {
        edge = Math.min(edge, w.latest + w.duration);
      }
    }
    if (edge > limit) return { at: undefined, searchedUntil: new Date(limit) };
    t = edge;
    for (const w of sweep) {
      if (w.next === t) {
        w.latest = t;
        w.next = w.schedule.next(new Date(t))?.getTime();
        read++;
      }
    }
    const open = sweep.filter((w) => w.latest !== undefined && w.latest + w.duration > t);
    if (
      causeOf(
        windows,
        open.map((w) => w.window),
        manual,
      ) === undefined
    ) {
      return { at: new Date(t), searchedUntil: new Date(t) };
    }
  }
  return { at: undefined, searchedUntil: new Date(t) };
}

/** "deny window spec.syncWindows[1] (\"0 22 * * *\" Europe/Berlin, 8h: freeze)". */
export function describeWindow(ref: SyncWindowRef): string {
  const w = ref.window;
  const note = w.description ? `: ${w.description}` : "";
  return `${w.kind} window spec.syncWindows[${ref.index}] ("${w.schedule}" ${w.timeZone}, ${w.duration}${note})`;
}

function blockMessage(
  cause: "deny" | "allow",
  blocking: readonly SyncWindowRef[],
  manual: boolean,
  when: Date,
  found: boolean,
): string {
  const what = manual ? "manual sync" : "automated sync";
  const names = blocking.map(describeWindow).join(", ");
  const why =
    cause === "deny"
      ? `${what} is blocked by the open ${names}`
      : `${what} runs only inside an allow window, and none is open (${names})`;
  const hint = manual ? " (manualSync: true on a window lets operations through)" : "";
  const next = found
    ? `; next allowed at ${when.toISOString()}`
    : `; no window allows it before ${when.toISOString()}`;
  return `${why}${next}${hint}`;
}

/** Parsed schedules, per window object (a run asks about the same windows many times). */
const schedules = new WeakMap<SyncWindow, CronSchedule>();

function scheduleOf(window: SyncWindow): CronSchedule {
  let schedule = schedules.get(window);
  if (!schedule) {
    schedule = cronSchedule(window.schedule, window.timeZone);
    schedules.set(window, schedule);
  }
  return schedule;
}
