// Slack messages for transitions (Block Kit, https://api.slack.com/block-kit), built purely
// from what the run decided. The Held alert carries the approval preview and Approve / Reject
// buttons, which Slack sends to POST /slack/interactions.
import type { ObjectRef } from "../app/index.ts";
import type { Transition } from "./notify.ts";
import { changeValues, type Preview, previewOf } from "./preview.ts";

/** action_id of the Held alert's buttons. */
export const SLACK_APPROVE = "plumb_approve";
export const SLACK_REJECT = "plumb_reject";

/** What a button's `value` carries: the App and the revision it was shown for. */
export interface SlackButtonValue {
  namespace: string;
  name: string;
  revision: string;
}

/** Objects listed per kind of change; the rest is counted ("… and 3 more"). */
const LIST_MAX = 15;
/** Fields listed per changed object; the rest is counted ("… and 2 more fields"). */
const FIELDS_MAX = 5;

/** Escapes `&`, `<`, `>` as Slack's mrkdwn requires (https://api.slack.com/reference/surfaces/formatting#escaping). */
export function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function describe(ref: ObjectRef): string {
  return ref.namespace ? `${ref.kind} ${ref.namespace}/${ref.name}` : `${ref.kind} ${ref.name}`;
}

function list(title: string, lines: string[]): string | undefined {
  if (lines.length === 0) return undefined;
  const shown = lines.slice(0, LIST_MAX).map((l) => `• ${slackEscape(l)}`);
  if (lines.length > LIST_MAX) shown.push(`… and ${lines.length - LIST_MAX} more`);
  // Section text is capped at 3000 characters by Slack.
  return `*${title}*\n${shown.join("\n")}`.slice(0, 3000);
}

/**
 * One changed object: its line, then one line per field, "`path`: `live` → `desired`" (a
 * Secret's values hidden). A backtick in a value would end Slack's code span: shown as "'".
 */
function describeChange(c: Preview["change"][number]): string {
  const code = (text: string) => `\`${text.replaceAll("`", "'")}\``;
  const lines = c.changes.slice(0, FIELDS_MAX).map((f) => {
    const { live, desired } = changeValues(f);
    return `    ${code(f.path)}: ${code(live)} → ${code(desired)}`;
  });
  if (c.changes.length > FIELDS_MAX) {
    lines.push(`    … and ${c.changes.length - FIELDS_MAX} more fields`);
  }
  return [describe(c), ...lines].join("\n");
}

/**
 * The Slack payload announcing `t` for App `app`: `{text, blocks, channel?}`. `text` is the
 * plain fallback "[ns/name] Event: message". For a Held transition the blocks also list what
 * approving will create, change (each field with its live and desired value, at most
 * {@link FIELDS_MAX} per object), prune and fail on, from `t.held.preview`, and end
 * with Approve and Reject buttons whose value is a {@link SlackButtonValue} as JSON.
 * Every dynamic text is escaped; nothing here comes from a Secret.
 */
export function slackMessage(
  app: { metadata: { namespace: string; name: string } },
  t: Transition,
  channel?: string,
): Record<string, unknown> {
  const id = `${app.metadata.namespace}/${app.metadata.name}`;
  const blocks: Array<Record<string, unknown>> = [
    {
      type: "section",
      text: { type: "mrkdwn", text: `*${id}* — *${t.event}*\n${slackEscape(t.message)}` },
    },
  ];
  if (t.event === "Held" && t.held) {
    const preview = previewOf(t.held.preview);
    const sections = [
      list("Will create", preview.create.map(describe)),
      list("Will change", preview.change.map(describeChange)),
      list("Will prune", preview.prune.map(describe)),
      list(
        "Will fail",
        preview.fail.map((f) => `${describe(f)}: ${f.message}`),
      ),
    ].filter((s): s is string => s !== undefined);
    if (sections.length === 0) sections.push("_No object changes: only the revision moves._");
    for (const text of sections) blocks.push({ type: "section", text: { type: "mrkdwn", text } });
    const value: SlackButtonValue = {
      namespace: app.metadata.namespace,
      name: app.metadata.name,
      revision: t.held.revision,
    };
    blocks.push({
      type: "actions",
      block_id: "plumb_approval",
      elements: [
        {
          type: "button",
          action_id: SLACK_APPROVE,
          text: { type: "plain_text", text: "Approve" },
          style: "primary",
          value: JSON.stringify(value),
        },
        {
          type: "button",
          action_id: SLACK_REJECT,
          text: { type: "plain_text", text: "Reject" },
          style: "danger",
          value: JSON.stringify(value),
        },
      ],
    });
  }
  const payload: Record<string, unknown> = { text: `[${id}] ${t.event}: ${t.message}`, blocks };
  if (channel) payload["channel"] = channel;
  return payload;
}
