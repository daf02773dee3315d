// Reading HTTP responses from untrusted servers under a deadline and a size cap (Web APIs only,
// so it runs in Node and workerd).
import { SourceError } from "../core/errors.ts";

/** `promise`, or a rejection with the signal's reason as soon as `signal` aborts. */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/** Reads the body of `res`, at most `max` bytes (SourceError, not transient, past that). */
export async function readCapped(
  res: Response,
  max: number,
  signal: AbortSignal,
  what: string,
): Promise<Uint8Array> {
  const tooBig = () => new SourceError(`${what} is larger than ${max} bytes; refused`, false);
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > max) {
    discard(res);
    throw tooBig();
  }
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await raceSignal(reader.read(), signal);
      if (done) break;
      total += value.byteLength;
      if (total > max) throw tooBig();
      chunks.push(value);
    }
  } catch (err) {
    reader.cancel().catch(() => {});
    throw err;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** Drops an unread body so the connection can be reused. */
export function discard(res: Response): void {
  if (res.body && !res.bodyUsed) res.body.cancel().catch(() => {});
}
