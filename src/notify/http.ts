// Slack incoming webhooks over fetch (Node and workerd alike).
import type { NotifyPort } from "../reconcile/ports.ts";

/**
 * A NotifyPort posting JSON to Slack incoming-webhook URLs
 * (https://api.slack.com/messaging/webhooks). Non-2xx answers throw an Error that names the
 * status only — never the URL, which is a secret.
 */
export function createSlackNotifier(
  fetchImpl: typeof fetch = fetch,
  timeoutMs = 10_000,
): NotifyPort {
  return {
    async slack(webhookUrl, payload) {
      const res = await fetchImpl(webhookUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) throw new Error(`Slack answered HTTP ${res.status}`);
      await res.body?.cancel();
    },
  };
}
