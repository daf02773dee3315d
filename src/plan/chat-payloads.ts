// The payloads of the chat and webhook targets (generic, Microsoft Teams, Discord, Google
// Chat), built purely from one NotificationEvent. Slack's is slack-message.ts.
import type { NotifyEvent } from "../app/index.ts";
import type { NotificationEvent } from "./notify.ts";
import { short } from "./notify.ts";

/** "error" for the events that report a problem (Failed, Degraded), else "info" (Flux's severities). */
export type Severity = "info" | "error";

/** The severity of `event`: what a receiver filters alerts by. */
export function severityOf(event: NotifyEvent): Severity {
  return event === "Failed" || event === "Degraded" ? "error" : "info";
}

/**
 * The generic webhook's body (JSON): `{app: {namespace, name}, event, severity, message,
 * revision?}`, `revision` the full revision the event is about when known. Keys in this order;
 * the body is signed as sent (X-Signature), so a receiver verifies the bytes it received.
 */
export interface GenericEvent {
  app: { namespace: string; name: string };
  event: NotifyEvent;
  severity: Severity;
  message: string;
  revision?: string;
}

/** The generic webhook's body for `event`. */
export function genericEvent(event: NotificationEvent): GenericEvent {
  const body: GenericEvent = {
    app: { namespace: event.app.namespace, name: event.app.name },
    event: event.transition,
    severity: severityOf(event.transition),
    message: event.message,
  };
  if (event.revision !== undefined) body.revision = event.revision;
  return body;
}

/** "team-a/web". */
function idOf(event: NotificationEvent): string {
  return `${event.app.namespace}/${event.app.name}`;
}

/** The plain one-line form every chat target shows: "[team-a/web] Synced: applied revision abc1234". */
export function plainText(event: NotificationEvent): string {
  return `[${idOf(event)}] ${event.transition}: ${event.message}`;
}

/** Adaptive Card TextBlock colours (https://adaptivecards.io/explorer/TextBlock.html). */
const CARD_COLOR: Record<NotifyEvent, string> = {
  Synced: "Good",
  Failed: "Attention",
  Degraded: "Attention",
  Recovered: "Good",
  Held: "Warning",
  DriftCorrected: "Accent",
  Healthy: "Good",
};

/**
 * The Microsoft Teams message for `event`: an Adaptive Card (version 1.4, as Flux's msteams
 * notifier sends: internal/notifier/teams.go) in the message envelope Microsoft documents for
 * incoming webhooks and Power Automate workflows (`{type: "message", attachments:
 * [{contentType: "application/vnd.microsoft.card.adaptive", contentUrl: null, content}]}`):
 * a title "team-a/web — Synced" coloured by the event, the message, and a Revision fact when
 * the revision is known.
 */
export function teamsMessage(event: NotificationEvent): Record<string, unknown> {
  const body: Array<Record<string, unknown>> = [
    {
      type: "TextBlock",
      text: `${idOf(event)} — ${event.transition}`,
      size: "Medium",
      weight: "Bolder",
      color: CARD_COLOR[event.transition],
      wrap: true,
    },
    { type: "TextBlock", text: event.message, wrap: true },
  ];
  if (event.revision !== undefined) {
    body.push({ type: "FactSet", facts: [{ title: "Revision", value: short(event.revision) }] });
  }
  return {
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: {
          $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
          type: "AdaptiveCard",
          version: "1.4",
          body,
          msteams: { width: "Full" },
        },
      },
    ],
  };
}

/** Discord embed colours (integers, as Discord's embed `color` is). */
const DISCORD_COLOR: Record<Severity, number> = { info: 0x2eb67d, error: 0xe01e5a };

/**
 * The Discord Execute Webhook body for `event`
 * (https://discord.com/developers/docs/resources/webhook#execute-webhook): `content` the plain
 * line (at most 2000 characters), one embed with the title "team-a/web — Synced", the message
 * as its description (at most 4096), a colour by severity and a Revision field when known;
 * `allowed_mentions: {parse: []}` so a message quoting "@everyone" pings no one; `username`
 * when configured.
 */
export function discordMessage(
  event: NotificationEvent,
  username?: string,
): Record<string, unknown> {
  const embed: Record<string, unknown> = {
    title: truncate(`${idOf(event)} — ${event.transition}`, 256),
    description: truncate(event.message, 4096),
    color: DISCORD_COLOR[severityOf(event.transition)],
  };
  if (event.revision !== undefined) {
    embed["fields"] = [{ name: "Revision", value: short(event.revision), inline: true }];
  }
  const payload: Record<string, unknown> = {
    content: truncate(plainText(event), 2000),
    embeds: [embed],
    allowed_mentions: { parse: [] },
  };
  if (username !== undefined) payload["username"] = username;
  return payload;
}

/**
 * The Google Chat incoming-webhook body for `event`: a text message `{text}`
 * (https://developers.google.com/workspace/chat/quickstart/webhooks), the plain line, and the
 * revision on a second line when known and not already in the message.
 */
export function googleChatMessage(event: NotificationEvent): { text: string } {
  const revision = event.revision === undefined ? undefined : short(event.revision);
  const text =
    revision !== undefined && !event.message.includes(revision)
      ? `${plainText(event)}\nRevision: ${revision}`
      : plainText(event);
  return { text: truncate(text, 4096) };
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
