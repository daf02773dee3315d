// The soak's slow-link mode: a run whose apply is held on the link past its Lease, so that its
// write lands after a newer run applied a newer commit (an older revision's value under plumb's
// own field manager). Each round checks that the next full run reports and corrects it.
import type { App } from "../src/app/index.ts";
import { createKubePort, DiscoveryCache } from "../src/kube/index.ts";
import { nodeKubeTransport } from "../src/kube/node.ts";
import { type Ports, reconcileApp } from "../src/reconcile/index.ts";
import { createGitPort } from "../src/source/git.ts";
import type { FaultProxy } from "../test/support/fault-proxy.ts";
import { waitFor } from "../test/support/wait.ts";
import { checkApplied, type SoakApp, type Violation } from "./invariants.ts";

/** What the slow-link rounds saw. */
export interface SlowLinkTally {
  rounds: number;
  /** Rounds whose held write landed over the newer commit's value (the cluster held it). */
  landed: number;
  /** Rounds whose next full run reported the drift: status.corrected of that run names it. */
  reported: number;
  violations: Violation[];
}

/** What a round needs from the soak: the App's next commit, and ports without faults. */
export interface SlowLinkRound {
  app: SoakApp;
  /** Commits a new value of ConfigMap `name` (data.k); returns the value committed. */
  commit(name: string): Promise<string>;
  /** The ConfigMap's live data.k. */
  liveValue(name: string): Promise<string | undefined>;
  /** Ports straight to the API server. */
  clean(): Ports;
  /** The App as the API server has it. */
  read(): Promise<App>;
}

/**
 * One round on `held` (a fault proxy nothing else uses) for ConfigMap `name` of `round.app`
 * (selfHeal on): commit A; run A through `held` with its Lease renewals unanswered and its
 * apply of `name` held; commit B; run B without faults (it waits out A's Lease and applies B);
 * once A gave up, the held write reaches the API server; then one full run (compare: true).
 * Invariant (checkApplied): after that run the live objects are exactly status.revision's
 * render and status.revision is the head.
 * @param kubeconfig the kubeconfig of `held`
 */
export async function slowLinkRound(
  round: SlowLinkRound,
  held: FaultProxy,
  kubeconfig: string,
  name: string,
  tally: SlowLinkTally,
  checkKube: Parameters<typeof checkApplied>[0],
): Promise<void> {
  const { app } = round;
  const ref = { namespace: app.namespace, name: app.name };
  held.clear();
  const older = await round.commit(name);
  held.inject({
    method: "PUT",
    path: "/leases/",
    times: Number.POSITIVE_INFINITY,
    fault: { hang: true },
  });
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const seenBefore = held.requests.length;
  held.inject({ method: "PATCH", path: `/configmaps/${name}`, fault: { holdUntil: gate } });
  const transport = nodeKubeTransport(kubeconfig, {
    retry: { attemptTimeoutMs: 8_000, deadlineMs: 20_000 },
  });
  const slow: Ports = {
    kube: createKubePort(transport, { discovery: new DiscoveryCache() }),
    git: createGitPort(),
    holder: "soak-slow-link",
  };
  const a = reconcileApp(ref, slow, new Date()).catch(() => undefined);
  const isHeld = (i: number) => held.requests[i]?.fault === "hold";
  const heldAt = await waitFor("the held apply", async () => {
    const i = held.requests.findIndex((_, j) => j >= seenBefore && isHeld(j));
    return i >= 0 ? i + 1 : undefined;
  });
  await round.commit(name);
  await reconcileApp(ref, round.clean(), new Date());
  await a;
  release();
  await waitFor("the held apply to land", async () => held.requests[heldAt - 1]?.status);
  held.clear();
  tally.rounds += 1;
  if ((await round.liveValue(name)) === older) tally.landed += 1;
  const full = new Date();
  await reconcileApp(ref, round.clean(), full, { compare: true });
  const corrected = (await round.read()).status?.lastDriftCorrection;
  const named = corrected?.objects.some((o) => o.startsWith(`ConfigMap ${app.namespace}/${name}`));
  if (corrected?.at === full.toISOString() && named) tally.reported += 1;
  tally.violations.push(...(await checkApplied(checkKube, app)));
}
