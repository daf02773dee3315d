// The web page in a real browser: headless Chromium (Debian's package, obtained by
// test/tools/tools.sh and driven by playwright-core, which downloads no browser) against
// `plumb serve` on the real control plane.
// Screenshots go to test/e2e/output/ (gitignored).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { reconcileApp } from "../../src/reconcile/index.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
  type TestRepo,
} from "../support/git-server.ts";
import { type Served, startServe } from "../support/serve.ts";
import {
  createApp,
  createNamespace,
  deploymentImage,
  getApp,
  kubeconfig,
  patchAppSpec,
  realPorts,
  waitFor,
} from "./support.ts";

const OUT = resolve(import.meta.dirname, "output");
const RUN = Date.now().toString(36);
const SHOP = `web-${RUN}`;
const OTHER = `team-${RUN}`;
/** An App whose long source and long message the list must lay out at 1280 px. */
const LONG = `long-${RUN}`;
const ADMIN = "browser-admin-token-0123456789";
const TEAM = "browser-team-token-0123456789";
/** Flags for Chromium on this machine's closed network (no background connections). */
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

let git: GitServer;
let repo: TestRepo;
let server: Served;
let profile: string;
let context: BrowserContext;
let base: string;

const guestbook = () => fixtureFiles(join(REAL_FIXTURES, "guestbook"));
const reconcile = (ns: string, name: string) =>
  reconcileApp({ namespace: ns, name }, realPorts(), new Date());

beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  git = await startGitServer();
  repo = await git.createRepo(SHOP, guestbook());
  await createNamespace(SHOP);
  await createNamespace(OTHER);
  // Where plumb records sign-outs (PLUMB_NAMESPACE).
  await createNamespace(`plumb-${RUN}`);
  // shop: revision 1 approved and applied, then revision 2 (a new image) held for approval.
  await createApp(SHOP, "shop", {
    source: { git: { url: repo.url } },
    syncPolicy: { requiresApproval: true },
  });
  await reconcile(SHOP, "shop");
  const first = await repo.head();
  await patchAppSpec(SHOP, "shop", {
    operation: { id: `approve-${RUN}`, type: "Approve", revision: first, requestedBy: "setup" },
  });
  await reconcile(SHOP, "shop");
  const file = "guestbook-ui-deployment.yaml";
  await repo.commit({
    [file]: guestbook()[file]!.replace(":v5", ":v6").replace("replicas: 1", "replicas: 2"),
  });
  await reconcile(SHOP, "shop");
  const small = await git.createRepo(OTHER, {
    "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: '1'}\n",
  });
  await createApp(OTHER, "api", { source: { git: { url: small.url } } });
  await reconcile(OTHER, "api");
  // No such repository: Ready False, and the message names the long URL again.
  await createNamespace(LONG);
  await createApp(LONG, "missing", {
    source: {
      git: {
        url: `${git.url}/a-rather-long-organisation-name/and-an-even-longer-repository-name-${RUN}.git`,
        ref: "release-2026-03",
      },
    },
  });
  await reconcile(LONG, "missing");
  // Never reconciled: due at once.
  const fresh = await git.createRepo(`fresh-${RUN}`, {
    "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh}\ndata: {a: '1'}\n",
  });
  await createApp(LONG, "new", { source: { git: { url: fresh.url } } });

  server = await startServe(kubeconfig(), {
    PLUMB_SESSION_KEY: "browser-test-session-key-0123456789abcdef",
    PLUMB_NAMESPACE: `plumb-${RUN}`,
    PLUMB_API_TOKENS: JSON.stringify([
      { name: "admin", token: ADMIN },
      { name: "team", token: TEAM, namespaces: [OTHER] },
    ]),
  });
  // localhost: a secure context for Chromium over http, so the Secure cookie is kept.
  base = `http://localhost:${server.port}`;
  profile = mkdtempSync(join(tmpdir(), "plumb-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: inject("chromium"),
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1100, height: 760 },
  });
});

afterAll(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await server?.stop();
  await git?.stop();
});

/**
 * At `width` px: no table needs sideways scrolling (nothing in it is cut off), each cell of a
 * Source column wraps at a column's width (16 characters a line at least, not one), and each
 * cell of a Message column shows all of its text. Screenshot in test/e2e/output/.
 * @returns how many Source cells it measured
 */
async function expectLaidOut(page: Page, width: number): Promise<number> {
  const viewport = page.viewportSize();
  await page.setViewportSize({ width, height: 800 });
  try {
    const path = new URL(page.url()).pathname.replaceAll("/", "_");
    await page.screenshot({ path: join(OUT, `layout-${width}${path}.png`), fullPage: true });
    const tables = await page.evaluate(() =>
      [...document.querySelectorAll(".scroll")].map((box) => {
        const headers = [...box.querySelectorAll("th")].map((th) => th.textContent);
        const column = (name: string) =>
          [...box.querySelectorAll("tbody tr")].map((tr) => tr.children[headers.indexOf(name)]!);
        return {
          overflow: box.scrollWidth - box.clientWidth,
          // The lines its text spans: the distinct tops of the text's boxes (whatever the
          // element's display).
          sources: headers.includes("Source")
            ? column("Source").map((td) => {
                const text = document.createRange();
                text.selectNodeContents(td);
                const tops = [...text.getClientRects()].map((r) => Math.round(r.top));
                return { text: td.textContent, lines: new Set(tops).size };
              })
            : [],
          messages: headers.includes("Message")
            ? column("Message").map((td) => td.scrollWidth - td.clientWidth)
            : [],
        };
      }),
    );
    expect(tables.length).toBeGreaterThan(0);
    for (const t of tables) {
      expect(t.overflow).toBeLessThanOrEqual(0);
      for (const s of t.sources) {
        // Wrapped at a column's width, not per character: at least 16 characters a line.
        expect(s.lines, s.text ?? "").toBeLessThanOrEqual(Math.ceil((s.text ?? "").length / 16));
      }
      expect(t.messages.every((overflow) => overflow <= 0)).toBe(true);
    }
    return tables.flatMap((t) => t.sources).length;
  } finally {
    if (viewport) await page.setViewportSize(viewport);
  }
}

async function signIn(page: Page, token: string) {
  await page.goto(`${base}/`);
  expect(new URL(page.url()).pathname).toBe("/login");
  await page.getByLabel("API token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${base}/`);
}

describe("the web page in Chromium", () => {
  it("sign in, see the list, open the held App, read the preview, approve it, see it Synced", async () => {
    const page = await context.newPage();
    await signIn(page, ADMIN);
    const cookie = (await context.cookies()).find((c) => c.name === "__Host-plumb_session");
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: "Strict", path: "/" });
    const row = page.getByRole("row").filter({ hasText: SHOP });
    expect(await row.textContent()).toMatch(/Held/);
    expect(await page.getByRole("row").filter({ hasText: OTHER }).count()).toBe(1);
    await page.screenshot({ path: join(OUT, "apps.png") });
    const long = page.getByRole("row").filter({ hasText: "and-an-even-longer-repository-name" });
    expect(await long.textContent()).toMatch(/SourceFailed|not found|404/);
    expect(await expectLaidOut(page, 1280)).toBe(await page.locator("tbody tr").count());
    // A coming run reads "due now" once due (never "0s ago"), else "in 2m".
    const nextReconcile = async (path: string) => {
      await page.goto(`${base}${path}`);
      return page.locator("dt", { hasText: "Next reconcile" }).locator("+ dd").textContent();
    };
    expect(await nextReconcile(`/apps/${LONG}/new`)).toBe("due now");
    expect(await nextReconcile(`/apps/${SHOP}/shop`)).toMatch(/^in \d+[smhd]$/);
    await page.goto(`${base}/`);

    await page.locator(`a[href="/apps/${SHOP}/shop"]`).click();
    await page.waitForURL(`${base}/apps/${SHOP}/shop`);
    await expectLaidOut(page, 1280);
    const held = (await getApp(SHOP, "shop")).status?.heldRevision;
    expect(held).toBe(await repo.head());
    expect(await page.locator("h2", { hasText: "what approving will do" }).count()).toBe(1);
    expect(await page.getByRole("heading", { name: "Recent Events" }).count()).toBe(1);
    expect(
      await page.locator("table").filter({ hasText: "Held" }).filter({ hasText: "Normal" }).count(),
    ).toBe(1);

    await page.getByRole("button", { name: "Review and approve…" }).click();
    await page.waitForURL(`${base}/apps/${SHOP}/shop/approve`);
    const preview = await page.locator("main").textContent();
    expect(preview).toContain("Will change");
    // Each changed field with its live and desired value, one row each.
    const rows = await page
      .locator("main table")
      .filter({ hasText: "Desired" })
      .locator("tbody tr")
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)),
      );
    expect(rows).toEqual([
      [`Deployment ${SHOP}/guestbook-ui`, "spec.replicas", "1", "2"],
      [
        `Deployment ${SHOP}/guestbook-ui`,
        "spec.template.spec.containers[name=guestbook-ui].image",
        "gcr.io/google-samples/gb-frontend:v5",
        "gcr.io/google-samples/gb-frontend:v6",
      ],
    ]);
    await page.screenshot({ path: join(OUT, "approve.png") });

    await page.getByRole("button", { name: `Approve ${held!.slice(0, 7)}` }).click();
    await page.waitForURL(`${base}/apps/${SHOP}/shop?requested=Approve`);
    await waitFor(
      "Synced on the page",
      async () => {
        await page.reload();
        const text = (await page.locator("dl").first().textContent()) ?? "";
        return /Sync\s*Synced/.test(text) && text.includes(`Revision${held!.slice(0, 7)}`);
      },
      { everyMs: 500 },
    );
    expect(await deploymentImage(SHOP, "guestbook-ui")).toBe(
      "gcr.io/google-samples/gb-frontend:v6",
    );
    expect((await getApp(SHOP, "shop")).status?.operationState).toMatchObject({
      type: "Approve",
      phase: "Succeeded",
      requestedBy: "admin",
    });
    await page.screenshot({ path: join(OUT, "app.png"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(OUT, "app-phone.png") });
    await page.setViewportSize({ width: 1100, height: 760 });
    await page.close();
  });

  it("a form posted without the CSRF token is refused and changes nothing", async () => {
    const page = await context.newPage();
    await page.goto(`${base}/`);
    const before = (await getApp(SHOP, "shop")).metadata.resourceVersion;
    // The browser's own cookies, a form without _csrf (as another site's form would post).
    const res = await page.request.post(`${base}/apps/${SHOP}/shop/operations`, {
      form: { type: "sync" },
    });
    expect(res.status()).toBe(403);
    expect(await res.text()).toContain("missing or invalid CSRF token");
    const forged = await page.request.post(`${base}/apps/${SHOP}/shop/operations`, {
      form: { type: "sync", _csrf: "forged" },
    });
    expect(forged.status()).toBe(403);
    expect((await getApp(SHOP, "shop")).metadata.resourceVersion).toBe(before);
    await page.close();
  });

  it("signs out; a namespace-limited token sees only its namespaces", async () => {
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${base}/login`);
    await signIn(page, TEAM);
    const main = await page.locator("main").textContent();
    expect(main).toContain(OTHER);
    expect(main).not.toContain(SHOP);
    const res = await page.goto(`${base}/apps/${SHOP}/shop`);
    expect(res?.status()).toBe(403);
    expect(await page.locator("main").textContent()).toContain(
      `token "team" may not use namespace "${SHOP}"`,
    );
    await page.close();
  });
});
