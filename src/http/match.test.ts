import { describe, expect, it } from "vitest";
import { appMatchesPush, normalizeRepoUrl, qualifyRef } from "./match.ts";

describe("normalizeRepoUrl", () => {
  it.each([
    ["https://host/org/demo.git", "host/org/demo"],
    ["https://host/org/demo", "host/org/demo"],
    ["https://host/org/demo/", "host/org/demo"],
    ["https://host/org/demo.git/", "host/org/demo"],
    ["http://host/org/demo", "host/org/demo"],
    ["git@host:org/demo.git", "host/org/demo"],
    ["host:org/demo.git", "host/org/demo"],
    ["git@host:/org/demo.git", "host/org/demo"],
    ["ssh://git@host/org/demo.git", "host/org/demo"],
    ["ssh://git@host:22/org/demo.git", "host/org/demo"],
    ["https://user:pass@host/org/demo.git", "host/org/demo"],
    ["https://user:p@ss@host/org/demo.git", "host/org/demo"],
    ["https://HOST:443/Org/Demo.GIT", "host/org/demo"],
    ["http://host:80/org/demo", "host/org/demo"],
    ["git://host:9418/org/demo.git", "host/org/demo"],
    ["https://host/org/demo.git?x=1#frag", "host/org/demo"],
    ["  https://host/org/demo.git  ", "host/org/demo"],
    ["http://localhost:3000/gitea/webhooks.git", "localhost:3000/gitea/webhooks"],
    ["ssh://gitea@localhost:2222/gitea/webhooks.git", "localhost:2222/gitea/webhooks"],
    ["https://[::1]:8443/org/demo.git", "[::1]:8443/org/demo"],
    ["https://host/org/demo.git.git", "host/org/demo.git"],
  ])("%s → %s", (input, key) => {
    expect(normalizeRepoUrl(input)).toBe(key);
  });

  it("keeps different repositories apart", () => {
    expect(normalizeRepoUrl("https://host/org/demo-copy.git")).toBe("host/org/demo-copy");
    expect(normalizeRepoUrl("https://host:8443/org/demo")).not.toBe(
      normalizeRepoUrl("https://host/org/demo"),
    );
    expect(normalizeRepoUrl("https://other/org/demo")).not.toBe(
      normalizeRepoUrl("https://host/org/demo"),
    );
  });
});

describe("qualifyRef", () => {
  it.each([
    ["main", "refs/heads/main"],
    ["feature/x", "refs/heads/feature/x"],
    ["refs/heads/main", "refs/heads/main"],
    ["refs/tags/v1.2.0", "refs/tags/v1.2.0"],
    ["HEAD", "HEAD"],
  ])("%s → %s", (ref, full) => {
    expect(qualifyRef(ref)).toBe(full);
  });
});

describe("appMatchesPush", () => {
  const demoUrls = ["https://host/org/demo.git", "git@host:org/demo.git", "https://host/org/demo"];

  it("matches by repository equality, never by prefix", () => {
    const apps = {
      https: { url: "https://host/org/demo.git", ref: "main" },
      copy: { url: "https://host/org/demo-copy.git", ref: "main" },
      scp: { url: "git@host:org/demo.git", ref: "main" },
    };
    const push = { repoUrls: demoUrls, ref: "refs/heads/main", defaultBranch: "main" };
    const matched = Object.entries(apps)
      .filter(([, s]) => appMatchesPush(s, push))
      .map(([k]) => k);
    expect(matched).toEqual(["https", "scp"]);
  });

  it("a push to org/demo-copy does not refresh Apps on org/demo", () => {
    const push = { repoUrls: ["https://host/org/demo-copy.git"], ref: "refs/heads/main" };
    expect(appMatchesPush({ url: "https://host/org/demo.git", ref: "main" }, push)).toBe(false);
    expect(appMatchesPush({ url: "https://host/org/demo-copy", ref: "main" }, push)).toBe(true);
  });

  const refApps = {
    full: { url: "https://host/org/demo.git", ref: "refs/heads/main" },
    short: { url: "https://host/org/demo.git", ref: "main" },
    head: { url: "https://host/org/demo.git", ref: "HEAD" },
    tag: { url: "https://host/org/demo.git", ref: "refs/tags/v1.2.0" },
  };
  const matching = (ref: string, defaultBranch?: string) =>
    Object.entries(refApps)
      .filter(([, s]) => appMatchesPush(s, { repoUrls: demoUrls, ref, defaultBranch }))
      .map(([k]) => k);

  it("a push to refs/heads/main refreshes refs/heads/main, main and HEAD (default branch main)", () => {
    expect(matching("refs/heads/main", "main")).toEqual(["full", "short", "head"]);
  });

  it("a push of refs/tags/v1.2.0 refreshes only the App on the tag", () => {
    expect(matching("refs/tags/v1.2.0", "main")).toEqual(["tag"]);
  });

  it("a push to another branch refreshes none of them", () => {
    expect(matching("refs/heads/develop", "main")).toEqual([]);
  });

  it("HEAD follows the default branch; any branch when the payload does not say", () => {
    expect(matching("refs/heads/develop", "develop")).toEqual(["head"]);
    expect(matching("refs/heads/develop")).toEqual(["head"]);
    expect(matching("refs/tags/v9")).toEqual([]);
  });

  it("an App without a ref is on HEAD", () => {
    const push = { repoUrls: demoUrls, ref: "refs/heads/main", defaultBranch: "main" };
    expect(appMatchesPush({ url: "https://host/org/demo" }, push)).toBe(true);
  });

  it("a short tag name matches the tag push", () => {
    const push = { repoUrls: demoUrls, ref: "refs/tags/v1.2.0", defaultBranch: "main" };
    expect(appMatchesPush({ url: "https://host/org/demo", ref: "v1.2.0" }, push)).toBe(true);
  });

  it("an App pinned to a full commit SHA never matches", () => {
    const sha = "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c";
    const pushes = [`refs/heads/${sha}`, "refs/heads/main", `refs/tags/${sha}`];
    for (const ref of pushes) {
      expect(
        appMatchesPush({ url: "https://host/org/demo", ref: sha }, { repoUrls: demoUrls, ref }),
      ).toBe(false);
      expect(
        appMatchesPush(
          { url: "https://host/org/demo", ref: sha.toUpperCase() },
          { repoUrls: demoUrls, ref },
        ),
      ).toBe(false);
    }
  });
});
