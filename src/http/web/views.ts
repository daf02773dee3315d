// The web page's views, server-rendered with hono/jsx. Written with its `jsx` function rather
// than JSX syntax: Node runs plumb's TypeScript by stripping types, which cannot compile JSX.
// Every value is escaped by the renderer; nothing here builds HTML from strings.
import { type Child, jsx as h, type JSXNode } from "hono/jsx";
import type { App, Condition, ObjectRef } from "../../app/index.ts";
import { changeValues, previewOf, short } from "../../plan/index.ts";
import { nextRunOf, requestedOperation, sourceOf } from "../appview.ts";
import type { Caller } from "../auth.ts";
import type { AppEvent } from "../types.ts";

/** Status filters of the Apps list (`?status=`). */
export const STATUS_FILTERS = [
  "held",
  "failed",
  "drifted",
  "synced",
  "outofsync",
  "degraded",
  "progressing",
] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

/** Whether `app` passes the list's status filter. */
export function matchesStatus(app: App, filter: StatusFilter): boolean {
  const s = app.status ?? {};
  switch (filter) {
    case "held":
      return Boolean(s.heldRevision);
    case "failed":
      return (s.failures ?? 0) > 0;
    case "drifted":
      return (s.drift ?? []).length > 0;
    case "synced":
      return s.syncStatus === "Synced";
    case "outofsync":
      return s.syncStatus === "OutOfSync";
    case "degraded":
      return s.healthStatus === "Degraded";
    case "progressing":
      return s.healthStatus === "Progressing";
  }
}

interface Chrome {
  title: string;
  caller?: Caller;
  csrf?: string;
  /** Seconds after which the browser reloads the page (meta refresh: no JavaScript). */
  refresh?: number;
}

/** The whole document around `body`: head, header with sign-out, main. */
export function layout(chrome: Chrome, ...body: Child[]): JSXNode {
  const head = h(
    "head",
    null,
    h("meta", { charset: "utf-8" }),
    h("meta", { name: "viewport", content: "width=device-width, initial-scale=1" }),
    chrome.refresh ? h("meta", { "http-equiv": "refresh", content: String(chrome.refresh) }) : null,
    h("title", null, `${chrome.title} · plumb`),
    h("link", { rel: "stylesheet", href: "/assets/plumb.css" }),
  );
  const header = h(
    "header",
    null,
    h("a", { class: "brand", href: "/" }, "plumb"),
    chrome.caller && chrome.csrf
      ? h(
          "form",
          { method: "post", action: "/logout" },
          h("span", { class: "muted" }, `${chrome.caller.name} `),
          csrfField(chrome.csrf),
          h("button", { type: "submit" }, "Sign out"),
        )
      : null,
  );
  return h("html", { lang: "en" }, head, h("body", null, header, h("main", null, ...body)));
}

function csrfField(csrf: string): Child {
  return h("input", { type: "hidden", name: "_csrf", value: csrf });
}

function statusText(value: string | undefined | null): Child {
  if (!value) return h("span", { class: "muted" }, "—");
  return h("span", { class: `s-${value}` }, value);
}

function badges(app: App): Child[] {
  const s = app.status ?? {};
  const out: Child[] = [];
  if (s.heldRevision) out.push(h("span", { class: "badge b-held" }, "Held"));
  if ((s.failures ?? 0) > 0) out.push(h("span", { class: "badge b-failed" }, "Failed"));
  if ((s.drift ?? []).length > 0) out.push(h("span", { class: "badge b-drifted" }, "Drifted"));
  return out;
}

/** "45s", "12m", "3h", "2d": a duration of `ms` (its absolute value), coarsely. */
function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/**
 * How a time reads from `now`, by which way it faces: a past event ("past": last sync, an
 * Event) is "3m ago", "just now" within the second, "in 2m" only when it lies ahead (a clock
 * ahead of this one); a coming one ("next": the next reconcile) is "in 2m", and "due now" once
 * it has come (the App runs at the next tick), never "0s ago".
 */
export function relativeTime(at: number, now: number, facing: "past" | "next"): string {
  const ms = now - at;
  if (facing === "next") return ms >= 0 ? "due now" : `in ${span(ms)}`;
  if (Math.abs(ms) < 500) return "just now";
  return ms > 0 ? `${span(ms)} ago` : `in ${span(ms)}`;
}

/** {@link relativeTime} of an RFC 3339 time, with the time in full as the title. */
function when(time: string | undefined, now: Date, facing: "past" | "next"): Child {
  if (!time) return h("span", { class: "muted" }, "never");
  const ms = Date.parse(time);
  if (Number.isNaN(ms)) return time;
  return h("time", { datetime: time, title: time }, relativeTime(ms, now.getTime(), facing));
}

/** A past time: "3m ago". */
function ago(time: string | undefined, now: Date): Child {
  return when(time, now, "past");
}

function readyCondition(app: App): Condition | undefined {
  return app.status?.conditions?.find((c) => c.type === "Ready");
}

function appHref(app: App): string {
  return `/apps/${encodeURIComponent(app.metadata.namespace)}/${encodeURIComponent(app.metadata.name)}`;
}

function revisionText(rev: string | undefined): Child {
  return rev ? h("code", { title: rev }, short(rev)) : h("span", { class: "muted" }, "—");
}

function describeRef(r: ObjectRef): string {
  return r.namespace ? `${r.kind} ${r.namespace}/${r.name}` : `${r.kind} ${r.name}`;
}

/**
 * A table that scrolls sideways inside its box when the screen is narrower than it.
 * `classes[i]` is column i's cell class: "src" (a source URL, broken only after its slashes
 * and before its ref) or "msg" (prose that takes the room left and wraps, long words too).
 */
function table(
  headers: string[],
  rows: Child[][],
  empty: string,
  classes: ReadonlyArray<string | undefined> = [],
): Child {
  if (rows.length === 0) return h("p", { class: "muted" }, empty);
  const td = (c: Child, i: number) => h("td", classes[i] ? { class: classes[i] } : null, c);
  return h(
    "div",
    { class: "scroll" },
    h(
      "table",
      null,
      h("thead", null, h("tr", null, ...headers.map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", null, ...rows.map((cells) => h("tr", null, ...cells.map(td)))),
    ),
  );
}

/**
 * `text` with a line-break opportunity (<wbr>) after each "/" and before "@": a URL then wraps
 * between its path segments and before its ref, not inside a name.
 */
function breakable(text: string): Child[] {
  return text
    .split(/(?<=\/)|(?=@)/)
    .flatMap((part, i) => (i === 0 ? [part] : [h("wbr", null), part]));
}

/** The Apps list with its namespace and status filters. */
export function appsPage(opts: {
  apps: App[];
  namespaces: string[];
  namespace: string;
  status: StatusFilter | "";
  now: Date;
  caller: Caller;
  csrf: string;
}): JSXNode {
  const filters = h(
    "form",
    { class: "filters", method: "get", action: "/" },
    h(
      "label",
      null,
      "Namespace",
      h(
        "select",
        { name: "namespace" },
        h("option", { value: "", selected: opts.namespace === "" }, "all"),
        ...opts.namespaces.map((ns) =>
          h("option", { value: ns, selected: ns === opts.namespace }, ns),
        ),
      ),
    ),
    h(
      "label",
      null,
      "Status",
      h(
        "select",
        { name: "status" },
        h("option", { value: "", selected: opts.status === "" }, "any"),
        ...STATUS_FILTERS.map((s) => h("option", { value: s, selected: s === opts.status }, s)),
      ),
    ),
    h("button", { type: "submit" }, "Filter"),
  );
  const rows = opts.apps.map((app) => {
    const s = app.status ?? {};
    return [
      app.metadata.namespace,
      [h("a", { href: appHref(app) }, app.metadata.name), " ", badges(app)],
      h("code", null, ...breakable(sourceText(app))),
      revisionText(s.revision),
      statusText(s.syncStatus),
      statusText(s.healthStatus),
      ago(s.lastSyncedAt, opts.now),
      readyCondition(app)?.message ?? s.healthReason ?? "",
    ];
  });
  return layout(
    { title: "Apps", caller: opts.caller, csrf: opts.csrf },
    h("h1", null, "Apps"),
    filters,
    table(
      ["Namespace", "Name", "Source", "Revision", "Sync", "Health", "Last sync", "Message"],
      rows,
      "No Apps match.",
      [undefined, undefined, "src", undefined, undefined, undefined, undefined, "msg"],
    ),
  );
}

/** "git.example.com/org/repo.git@main": the source without its scheme, for the list. */
function sourceText(app: App): string {
  const source = sourceOf(app);
  if (!source.location) return "—";
  return `${source.location.replace(/^https?:\/\//, "")}@${source.ref}`;
}

function previewList(app: App): Child {
  const p = previewOf(app.status?.resources);
  const section = (title: string, items: Child[]) =>
    items.length === 0
      ? null
      : [
          h("h3", null, title),
          h("ul", { class: "preview" }, ...items.map((i) => h("li", null, i))),
        ];
  const parts = [
    section(
      "Will create",
      p.create.map((r) => describeRef(r)),
    ),
    p.change.length === 0
      ? null
      : [
          h("h3", null, "Will change"),
          table(
            ["Object", "Field", "Live", "Desired"],
            p.change.flatMap((c) =>
              c.changes.map((f) => {
                const { live, desired } = changeValues(f);
                return [
                  describeRef(c),
                  h("code", null, f.path),
                  h("code", null, live),
                  h("code", null, desired),
                ];
              }),
            ),
            "",
          ),
        ],
    section(
      "Will prune",
      p.prune.map((r) => describeRef(r)),
    ),
    section(
      "Will fail",
      p.fail.map((f) => `${describeRef(f)}: ${f.message}`),
    ),
  ].filter((x) => x !== null);
  if (parts.length === 0)
    return h("p", { class: "muted" }, "No object changes: only the revision moves.");
  return parts;
}

function opForm(
  app: App,
  csrf: string,
  type: string,
  label: string,
  extra: Child[] = [],
  cls = "",
): Child {
  return h(
    "form",
    { method: "post", action: `${appHref(app)}/operations` },
    csrfField(csrf),
    h("input", { type: "hidden", name: "type", value: type }),
    ...extra,
    h("button", { type: "submit", class: cls }, label),
  );
}

/** One App: status, actions, held preview, resources, drift, operation, Events, conditions. */
export function appPage(opts: {
  app: App;
  events: AppEvent[];
  now: Date;
  caller: Caller;
  csrf: string;
  notice?: string;
}): JSXNode {
  const { app, now, csrf } = opts;
  const s = app.status ?? {};
  const source = sourceOf(app);
  const pending = requestedOperation(app);
  const previous = s.previousRevisions ?? [];

  const summary = h(
    "dl",
    null,
    h("dt", null, "Source"),
    h(
      "dd",
      null,
      h("code", null, ...breakable(source.location ? `${source.location}@${source.ref}` : "—")),
    ),
    h("dt", null, "Sync"),
    h("dd", null, statusText(s.syncStatus)),
    h("dt", null, "Health"),
    h(
      "dd",
      null,
      statusText(s.healthStatus),
      s.healthReason ? h("span", { class: "muted" }, ` — ${s.healthReason}`) : null,
    ),
    h("dt", null, "Revision"),
    h("dd", null, revisionText(s.revision)),
    h("dt", null, "Source now"),
    h("dd", null, revisionText(s.observedRevision)),
    s.heldRevision ? [h("dt", null, "Held"), h("dd", null, revisionText(s.heldRevision))] : null,
    s.rejectedRevision
      ? [h("dt", null, "Rejected"), h("dd", null, revisionText(s.rejectedRevision))]
      : null,
    h("dt", null, "Last sync"),
    h("dd", null, ago(s.lastSyncedAt, now)),
    h("dt", null, "Next reconcile"),
    h("dd", null, when(nextRunOf(app, now), now, "next")),
  );

  const actions = h(
    "div",
    { class: "actions" },
    s.heldRevision
      ? h(
          "a",
          { href: `${appHref(app)}/approve` },
          h("button", { type: "button", class: "primary" }, "Review and approve…"),
        )
      : null,
    opForm(app, csrf, "sync", "Sync"),
    opForm(app, csrf, "restart", "Restart"),
    previous.length > 0
      ? opForm(
          app,
          csrf,
          "rollback",
          "Roll back",
          [
            h(
              "label",
              null,
              "to revision",
              h(
                "select",
                { name: "revision" },
                ...previous.map((p) =>
                  h("option", { value: p.revision }, `${short(p.revision)} (${p.deployedAt})`),
                ),
              ),
            ),
          ],
          "danger",
        )
      : null,
  );

  const resources = table(
    ["Object", "Status", "Health", "Message"],
    (s.resources ?? []).map((r) => [
      describeRef(r),
      statusText(r.status),
      statusText(r.health),
      r.message ?? "",
    ]),
    "No resources.",
    [undefined, undefined, undefined, "msg"],
  );
  const drift = table(
    ["Object", "Field", "Desired", "Live", "Manager"],
    (s.drift ?? []).flatMap((d) =>
      d.fields.map((f) => [
        describeRef(d),
        h("code", null, f.path),
        h("code", null, f.desired ?? ""),
        h("code", null, f.live ?? ""),
        f.manager ?? "",
      ]),
    ),
    "No drift.",
  );
  const op = s.operationState;
  const operation = [
    pending
      ? h(
          "p",
          { class: "notice" },
          `Pending: ${pending.type ?? "?"}${pending.revision ? ` ${short(pending.revision)}` : ""} requested by ${pending.requestedBy ?? "?"} — waiting for the next reconcile.`,
        )
      : null,
    op
      ? h(
          "dl",
          null,
          h("dt", null, "Last operation"),
          h("dd", null, `${op.type}${op.revision ? ` ${short(op.revision)}` : ""}`),
          h("dt", null, "Phase"),
          h("dd", null, statusText(op.phase)),
          h("dt", null, "Requested by"),
          h("dd", null, op.requestedBy ?? "—"),
          h("dt", null, "Finished"),
          h("dd", null, ago(op.finishedAt, now)),
          h("dt", null, "Message"),
          h("dd", null, op.message ?? ""),
        )
      : h("p", { class: "muted" }, "No operation yet."),
  ];
  const events = table(
    ["Type", "Reason", "Message", "Count", "Last seen"],
    opts.events.map((e) => [
      statusText(e.type),
      e.reason,
      e.message,
      String(e.count),
      ago(e.lastTimestamp, now),
    ]),
    "No recent Events.",
    [undefined, undefined, "msg"],
  );
  const conditions = table(
    ["Type", "Status", "Reason", "Message", "Since"],
    (s.conditions ?? []).map((c) => [
      c.type,
      statusText(c.status),
      c.reason,
      c.message,
      ago(c.lastTransitionTime, now),
    ]),
    "No conditions.",
    [undefined, undefined, undefined, "msg"],
  );

  const title = `${app.metadata.namespace}/${app.metadata.name}`;
  const chrome: Chrome = { title, caller: opts.caller, csrf };
  if (pending) chrome.refresh = 5;
  return layout(
    chrome,
    h("p", null, h("a", { href: "/" }, "← Apps")),
    h("h1", null, title, " ", badges(app)),
    opts.notice ? h("p", { class: "notice" }, opts.notice) : null,
    summary,
    h("h2", null, "Actions"),
    actions,
    s.heldRevision
      ? [
          h("h2", null, `Held revision ${short(s.heldRevision)}: what approving will do`),
          previewList(app),
        ]
      : null,
    h("h2", null, "Resources"),
    resources,
    h("h2", null, "Drift"),
    drift,
    h("h2", null, "Operation"),
    operation,
    h("h2", null, "Recent Events"),
    events,
    h("h2", null, "Conditions"),
    conditions,
  );
}

/** The approval page: the held revision's preview, then Approve and Reject. */
export function approvePage(opts: { app: App; caller: Caller; csrf: string }): JSXNode {
  const { app, csrf } = opts;
  const held = app.status?.heldRevision;
  const title = `Approve ${app.metadata.namespace}/${app.metadata.name}`;
  const revision = held ? [h("input", { type: "hidden", name: "revision", value: held })] : [];
  return layout(
    { title, caller: opts.caller, csrf },
    h(
      "p",
      null,
      h("a", { href: appHref(app) }, `← ${app.metadata.namespace}/${app.metadata.name}`),
    ),
    h("h1", null, title),
    held
      ? [
          h("p", null, "Revision ", h("code", null, held), " is held. Approving it will:"),
          previewList(app),
          h(
            "div",
            { class: "actions" },
            opForm(app, csrf, "approve", `Approve ${short(held)}`, revision, "primary"),
            opForm(app, csrf, "reject", "Reject", revision, "danger"),
          ),
        ]
      : h("p", { class: "notice" }, "Nothing is held for approval."),
  );
}

/** The sign-in form (an API token from PLUMB_API_TOKENS; never put in a URL). */
export function loginPage(opts: { csrf: string; error?: string }): JSXNode {
  return layout(
    { title: "Sign in" },
    h(
      "div",
      { class: "login" },
      h("h1", null, "Sign in to plumb"),
      opts.error ? h("p", { class: "notice error", role: "alert" }, opts.error) : null,
      h(
        "form",
        { method: "post", action: "/login" },
        csrfField(opts.csrf),
        h(
          "label",
          null,
          "API token",
          h("input", {
            type: "password",
            name: "token",
            autocomplete: "current-password",
            required: true,
          }),
        ),
        h("button", { type: "submit", class: "primary" }, "Sign in"),
      ),
    ),
  );
}

/** An error page: the status and what went wrong, with a way back. */
export function errorPage(
  status: number,
  message: string,
  caller?: Caller,
  csrf?: string,
): JSXNode {
  const chrome: Chrome = { title: `Error ${status}` };
  if (caller && csrf) {
    chrome.caller = caller;
    chrome.csrf = csrf;
  }
  return layout(
    chrome,
    h("h1", null, `Error ${status}`),
    h("p", { class: "notice error", role: "alert" }, message),
    h("p", null, h("a", { href: "/" }, "← Apps")),
  );
}

/** The document as text: doctype and the rendered tree. */
export async function renderDocument(node: JSXNode): Promise<string> {
  return `<!DOCTYPE html>${await node.toString()}`;
}
