// The push-then-apply case, written once and run against each runtime (Node's `plumb serve`
// and the Worker in workerd), as hono runs one case file against each of its adapters.
import { join } from "node:path";
import { expect } from "vitest";
import { fixtureFiles, REAL_FIXTURES, type TestRepo } from "../../support/git-server.ts";
import { sendGithubPush } from "../../support/github.ts";
import { deploymentImage, getApp, waitFor } from "../support.ts";

export interface PushCase {
  /** Base URL of the runtime's HTTP app. */
  base: string;
  /** The runtime's GITHUB_WEBHOOK_SECRET. */
  secret: string;
  /** The guestbook repository the App points at (served with allowSha1InWant). */
  repo: TestRepo;
  /** The App on `repo`: namespace and name. */
  namespace: string;
  name: string;
  /** The guestbook-ui image tag the new commit sets (e.g. "v7"). */
  tag: string;
  /** Extra text for a timeout (e.g. the runtime's log). */
  diagnostics?: () => string;
}

/**
 * Commits a new guestbook-ui image to `repo`, sends the signed GitHub push and asserts: 202
 * naming exactly the App and the revision, then the new image live in the cluster and
 * status.revision equal to the pushed commit (however long a loaded machine takes).
 */
export async function pushAppliesCommit(c: PushCase): Promise<void> {
  const file = "guestbook-ui-deployment.yaml";
  const original = fixtureFiles(join(REAL_FIXTURES, "guestbook"))[file]!;
  const sha = await c.repo.commit({ [file]: original.replace(":v5", `:${c.tag}`) });
  const res = await sendGithubPush(c.base, c.secret, c.repo.url, sha);
  expect(res.status).toBe(202);
  expect(await res.json()).toMatchObject({ apps: [`${c.namespace}/${c.name}`], revision: sha });
  const image = `gcr.io/google-samples/gb-frontend:${c.tag}`;
  await waitFor(
    "new image live",
    async () => (await deploymentImage(c.namespace, "guestbook-ui")) === image,
  ).catch((err) => {
    throw new Error(`${String(err)}\n${c.diagnostics?.() ?? ""}`);
  });
  // The objects land before the run writes status: wait for the record too.
  await waitFor(
    "status.revision is the pushed commit",
    async () => (await getApp(c.namespace, c.name)).status?.revision === sha,
  );
}
