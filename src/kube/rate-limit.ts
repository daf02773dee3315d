// Client-side rate limiting of Kubernetes API requests, as client-go's token bucket
// (k8s.io/client-go/util/flowcontrol NewTokenBucketRateLimiter: QPS tokens a second, up to
// `burst` saved; client-go's defaults are 5/10, Flux's controllers run --kube-api-qps=50
// --kube-api-burst=300). Several shards of one CronJob each hold their own bucket, so N
// processes at QPS q send at most N·q requests a second once their bursts are spent.
import type { KubeTransport } from "./transport.ts";

/** Token bucket settings: `qps` requests a second on average, `burst` at once (≥ 1). */
export interface RateLimit {
  qps: number;
  burst: number;
}

/** The clock and sleep a bucket uses (injected so tests step time without waiting). */
export interface RateClock {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

const realClock: RateClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/**
 * A token bucket: `take()` resolves when a token is free, in call order. Starts full (`burst`
 * tokens), refills `qps` a second (fractional tokens accrue between calls).
 * @throws Error when qps ≤ 0 or burst < 1
 */
export function tokenBucket(limit: RateLimit, clock: RateClock = realClock): () => Promise<void> {
  if (!(limit.qps > 0) || !(limit.burst >= 1)) {
    throw new Error(`rate limit needs qps > 0 and burst >= 1, got ${limit.qps}/${limit.burst}`);
  }
  let tokens = limit.burst;
  let last = clock.now();
  // Each taker reserves its token (tokens may go negative) and waits until the bucket has
  // refilled past it: FIFO without a queue, as golang.org/x/time/rate's Reserve.
  return async () => {
    const t = clock.now();
    tokens = Math.min(limit.burst, tokens + ((t - last) / 1000) * limit.qps);
    last = t;
    tokens -= 1;
    if (tokens < 0) await clock.sleep((-tokens / limit.qps) * 1000);
  };
}

/** `inner` with every request (each attempt of a retried one too) taking a token first. */
export function withRateLimit(
  inner: KubeTransport,
  limit: RateLimit,
  clock: RateClock = realClock,
): KubeTransport {
  const take = tokenBucket(limit, clock);
  return async (method, path, request) => {
    await take();
    return inner(method, path, request);
  };
}
