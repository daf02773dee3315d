// Slack interactions (the Held alert's Approve and Reject buttons): the payload Slack sends,
// validated as hostile input, and the messages plumb answers with. Pure.
import { z } from "zod";
import { SLACK_APPROVE, SLACK_REJECT, short, slackEscape } from "../plan/index.ts";
import type { SlackConfig } from "./config.ts";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const ButtonValue = z.strictObject({
  namespace: z.string().max(63).regex(DNS_LABEL),
  name: z.string().max(253).regex(DNS_SUBDOMAIN),
  revision: z.string().min(1).max(256),
});

/** The parts of a `block_actions` payload plumb reads (https://api.slack.com/reference/interaction-payloads/block-actions). */
const BlockActions = z.object({
  type: z.literal("block_actions"),
  user: z.object({ id: z.string().regex(/^[A-Z0-9]{2,32}$/) }),
  response_url: z.string().min(1).max(2048),
  actions: z
    .array(
      z.object({
        action_id: z.string().max(255),
        value: z.string().max(2000).optional(),
      }),
    )
    .min(1),
});

/** A button press plumb acts on. */
export interface SlackAction {
  action: "Approve" | "Reject";
  /** The Slack user id (U…/W…) who pressed it. */
  user: string;
  namespace: string;
  name: string;
  /** The revision the alert showed. */
  revision: string;
  responseUrl: string;
}

export type ParsedInteraction =
  | { kind: "action"; value: SlackAction }
  /** A well-formed interaction that is not one of plumb's buttons: acknowledged, ignored. */
  | { kind: "ignored"; reason: string }
  | { kind: "invalid"; message: string };

/**
 * Parses the body of a signed interaction request: `application/x-www-form-urlencoded` with one
 * field `payload` holding JSON. Invalid: no payload field, malformed JSON, a block_actions shape
 * that is wrong, a button value that is not plumb's JSON, or a response_url outside
 * `responseOrigins`. Other interaction types and other action_ids are "ignored".
 */
export function parseInteraction(
  body: string,
  responseOrigins: readonly string[],
): ParsedInteraction {
  const raw = new URLSearchParams(body).get("payload");
  if (raw === null) return { kind: "invalid", message: "missing payload field" };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { kind: "invalid", message: "payload is not valid JSON" };
  }
  const type = (json as { type?: unknown } | null)?.type;
  if (type !== "block_actions") {
    return { kind: "ignored", reason: `interaction type ${typeof type === "string" ? type : "?"}` };
  }
  const parsed = BlockActions.safeParse(json);
  if (!parsed.success) return { kind: "invalid", message: "malformed block_actions payload" };
  const p = parsed.data;
  const button = p.actions[0]!;
  if (button.action_id !== SLACK_APPROVE && button.action_id !== SLACK_REJECT) {
    return { kind: "ignored", reason: "not a plumb button" };
  }
  let value: z.output<typeof ButtonValue> | undefined;
  try {
    const r = ButtonValue.safeParse(JSON.parse(button.value ?? ""));
    value = r.success ? r.data : undefined;
  } catch {
    value = undefined;
  }
  if (!value) return { kind: "invalid", message: "malformed button value" };
  if (!allowedResponseUrl(p.response_url, responseOrigins)) {
    return { kind: "invalid", message: "response_url is not a Slack URL" };
  }
  return {
    kind: "action",
    value: {
      action: button.action_id === SLACK_APPROVE ? "Approve" : "Reject",
      user: p.user.id,
      namespace: value.namespace,
      name: value.name,
      revision: value.revision,
      responseUrl: p.response_url,
    },
  };
}

function allowedResponseUrl(url: string, origins: readonly string[]): boolean {
  try {
    const u = new URL(url);
    return origins.includes(u.origin) && u.username === "" && u.password === "";
  } catch {
    return false;
  }
}

/** Whether Slack user `user` may approve and reject in `namespace` (PLUMB_SLACK_APPROVERS). */
export function mayApprove(config: SlackConfig, user: string, namespace: string): boolean {
  const namespaces = Object.hasOwn(config.approvers, user) ? config.approvers[user] : undefined;
  return namespaces !== undefined && (namespaces.includes("*") || namespaces.includes(namespace));
}

/** An answer seen only by the user who pressed the button; the alert stays as it was. */
export function ephemeral(text: string): Record<string, unknown> {
  return { response_type: "ephemeral", replace_original: false, text };
}

/**
 * The alert replaced by its outcome (no buttons left): "team-a/web — Approved by @user:
 * revision 0123456 is being applied" or "… Rejected by @user: revision 0123456 will not be
 * applied".
 */
export function outcomeMessage(a: SlackAction): Record<string, unknown> {
  const id = `${a.namespace}/${a.name}`;
  const rev = slackEscape(short(a.revision));
  const what =
    a.action === "Approve"
      ? `revision \`${rev}\` is being applied`
      : `revision \`${rev}\` will not be applied`;
  const verb = a.action === "Approve" ? "Approved" : "Rejected";
  const text = `*${id}* — *${verb}* by <@${a.user}>: ${what}`;
  return {
    replace_original: true,
    text: `[${id}] ${verb} by ${a.user}: ${a.action === "Approve" ? "applying" : "not applying"} ${short(a.revision)}`,
    blocks: [{ type: "section", text: { type: "mrkdwn", text } }],
  };
}
