// Announce transitions: Slack messages for the events the App subscribed to.
import type { App } from "../app/index.ts";
import type { Transition } from "../plan/index.ts";
import type { Ports } from "./ports.ts";

/**
 * Posts one Slack message per subscribed transition (spec.notifications.slack.on). The
 * webhook URL comes from the Secret and is never logged. Failures are logged and swallowed:
 * a notification never fails a reconcile.
 */
export async function announce(app: App, list: readonly Transition[], ports: Ports): Promise<void> {
  const slack = (
    app.spec as
      | {
          notifications?: {
            slack?: {
              secretRef?: { name?: string; key?: string };
              on?: string[];
              channel?: string;
            };
          };
        }
      | undefined
  )?.notifications?.slack;
  if (!slack?.secretRef?.name || !ports.notify || list.length === 0) return;
  const wanted = list.filter((t) => (slack.on ?? [t.event]).includes(t.event));
  if (wanted.length === 0) return;
  const id = `${app.metadata.namespace}/${app.metadata.name}`;
  try {
    const data = await ports.kube.getSecret(app.metadata.namespace, slack.secretRef.name);
    const url = data?.[slack.secretRef.key ?? "webhookURL"];
    if (!url) {
      ports.log?.({
        app: id,
        msg: `Slack Secret ${slack.secretRef.name} has no key ${slack.secretRef.key ?? "webhookURL"}`,
      });
      return;
    }
    for (const t of wanted) {
      const payload: Record<string, unknown> = {
        text: `[${id}] ${t.event}: ${t.message}`,
        blocks: [
          {
            type: "section",
            text: { type: "mrkdwn", text: `*${id}* — *${t.event}*\n${t.message}` },
          },
        ],
      };
      if (slack.channel) payload["channel"] = slack.channel;
      await ports.notify.slack(url, payload);
    }
  } catch (err) {
    ports.log?.({
      app: id,
      msg: "Slack notification failed",
      error: err instanceof Error ? err.name : "error",
    });
  }
}
