// Polling for tests and the benchmark.

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * How long {@link waitFor} waits before it gives up: only for something that will never happen.
 * A loaded machine (load 20 on 2 cores) is ten times slower than an idle one, and the wait must
 * not turn that into a failure, so no caller picks a shorter one. Below the runner's own limit
 * per test (vitest.config.ts), so a hang is reported by what it waited for.
 */
export const WAIT_LIMIT_MS = 10 * 60_000;

/**
 * Polls `fn` every `everyMs` (default 250 ms) until it returns a truthy value, which it returns.
 * For what must happen eventually; how long it takes is never the assertion. `signal` ends the
 * wait early, when what it waits for is known never to come (the process it polls has died).
 * @throws Error naming `what` (and the last error `fn` threw) after {@link WAIT_LIMIT_MS};
 *   the signal's reason once `signal` is aborted
 */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  options: { everyMs?: number; signal?: AbortSignal } = {},
): Promise<T> {
  const everyMs = options.everyMs ?? 250;
  const deadline = Date.now() + WAIT_LIMIT_MS;
  let last: unknown;
  const { signal } = options;
  // A probe in flight when the signal fires (a request the server holds) is not waited for.
  const aborted = signal
    ? new Promise<never>((_, reject) => {
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      })
    : undefined;
  aborted?.catch(() => undefined);
  while (Date.now() < deadline) {
    signal?.throwIfAborted();
    try {
      const v = await (aborted ? Promise.race([fn(), aborted]) : fn());
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await sleep(everyMs);
  }
  throw new Error(
    `gave up after ${WAIT_LIMIT_MS / 60_000} min waiting for ${what}${last ? `: ${String(last)}` : ""}`,
  );
}
