// Outgoing notification requests over fetch (Node and workerd alike).
import type { NotifyPort } from "../reconcile/ports.ts";

/**
 * A NotifyPort POSTing over `fetchImpl`, each request given `timeoutMs`. A non-2xx answer
 * throws an Error with `status` whose message names the status only ("HTTP 404") — never the
 * URL, which may be a secret (a Slack incoming webhook is). A redirect is not followed (it is
 * an error, "HTTP 302"): a token header (GitLab's PRIVATE-TOKEN) would go along to wherever it
 * points, and a webhook URL is where the request belongs.
 */
export function createNotifier(fetchImpl: typeof fetch = fetch, timeoutMs = 10_000): NotifyPort {
  return {
    async post(url, body, headers, options) {
      const res = await fetchImpl(url, {
        method: "POST",
        headers,
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) {
        if (options?.settled) {
          // head() reads the answer and cancels the rest of it.
          if (options.settled(res.status, await head(res, ANSWER_MAX))) return;
        } else await res.body?.cancel();
        throw Object.assign(new Error(`the target answered HTTP ${res.status}`), {
          status: res.status,
        });
      }
      await res.body?.cancel();
    },
  };
}

/** A function POSTing a JSON payload through `port` (the HTTP app's answers to Slack's response_url). */
export function jsonPoster(
  port: NotifyPort = createNotifier(),
): (url: string, payload: Record<string, unknown>) => Promise<void> {
  return (url, payload) =>
    port.post(url, JSON.stringify(payload), { "content-type": "application/json" });
}

/** How much of a refusal's answer `settled` is shown. */
const ANSWER_MAX = 4096;

/** The first `max` bytes of `res`'s body as text (the rest is not read). */
async function head(res: Response, max: number): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < max) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel();
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all.subarray(0, max));
}
