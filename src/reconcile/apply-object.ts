// One object's server-side apply and what follows it: an immutable field is recreated when the
// object opts in; a failed apply reads the object as it is, so an existing
// one never looks Missing.
import { ANNOTATION_RECREATE } from "../app/index.ts";
import { describeRef, type KubeObject, refOf } from "../core/index.ts";
import { readApplyError } from "../plan/index.ts";
import { isRestart } from "./lease.ts";
import type { ClusterPort } from "./ports.ts";

export type ObjectApply =
  | {
      ok: true;
      /** The object as the API server stored it. */
      stored: KubeObject;
      /** Set when the object was deleted and created again: the immutable fields that changed. */
      recreated?: string[];
    }
  | {
      ok: false;
      /** Short: never the API server's object dump. */
      message: string;
      /** Retrying the same render cannot help (readApplyError). */
      terminal: boolean;
      /** The object as it is now: null when absent, undefined when it could not be read. */
      live: KubeObject | null | undefined;
    };

/** How long a recreate waits for the deleted object to be gone. */
const RECREATE_WAIT_MS = 60_000;

/**
 * Server-side applies `obj` (field manager plumb, force). Then:
 * - when the apply fails on an immutable field and the object is annotated
 *   `plumb.dev/recreate: "true"`, deletes it (background propagation), waits until it is gone
 *   (polling every 500 ms, up to 60 s) and applies it again;
 * - when the apply fails otherwise, reads the object (one GET) so the caller can show its own
 *   health.
 * @param redact the run's redactor, for a Secret's errors (readApplyError)
 */
export async function applyObject(
  obj: KubeObject,
  cluster: ClusterPort,
  sleep: (ms: number) => Promise<void>,
  redact?: (text: string) => string,
): Promise<ObjectApply> {
  const secret = isSecret(obj);
  try {
    return { ok: true, stored: await cluster.apply(obj) };
  } catch (e) {
    // The run's Lease ran out: it stops, writing nothing more.
    if (isRestart(e)) throw e;
    const failure = readApplyError(e, { secret, redact });
    if (
      failure.immutable.length > 0 &&
      obj.metadata.annotations?.[ANNOTATION_RECREATE] === "true"
    ) {
      return recreate(obj, cluster, sleep, failure.immutable, redact);
    }
    return { ok: false, ...failure, live: await readLive(cluster, obj) };
  }
}

async function recreate(
  obj: KubeObject,
  cluster: ClusterPort,
  sleep: (ms: number) => Promise<void>,
  immutable: string[],
  redact?: (text: string) => string,
): Promise<ObjectApply> {
  const ref = refOf(obj);
  try {
    await cluster.delete(ref);
    for (let waited = 0; ; waited += 500) {
      const live = await cluster.get(ref);
      if (!live) break;
      if (waited >= RECREATE_WAIT_MS) {
        return {
          ok: false,
          message: `deleted to recreate it (${immutable.join(", ")} changed), but ${describeRef(ref)} is still there after 60s`,
          terminal: false,
          live,
        };
      }
      await sleep(500);
    }
    return { ok: true, stored: await cluster.apply(obj), recreated: immutable };
  } catch (e) {
    if (isRestart(e)) throw e;
    const failure = readApplyError(e, { secret: isSecret(obj), redact });
    return { ok: false, ...failure, live: await readLive(cluster, obj) };
  }
}

async function readLive(
  cluster: ClusterPort,
  obj: KubeObject,
): Promise<KubeObject | null | undefined> {
  try {
    return (await cluster.get(refOf(obj))) ?? null;
  } catch {
    return undefined;
  }
}

/** A v1 Secret: its apply errors keep no message of the API server's (they may quote its data). */
export function isSecret(obj: KubeObject): boolean {
  return obj.kind === "Secret" && obj.apiVersion === "v1";
}
