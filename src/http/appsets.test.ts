import { describe, expect, it } from "vitest";
import { appSetsForWebhook } from "./appsets.ts";

describe("appSetsForWebhook", () => {
  const sets = [
    {
      namespace: "a",
      name: "dirs",
      spec: {
        generators: [
          {
            git: {
              repoURL: "https://git.example/org/shop.git",
              revision: "HEAD",
              directories: [{ path: "*", exclude: false }],
            },
          },
        ],
      },
    },
    {
      namespace: "a",
      name: "previews",
      spec: { generators: [{ pullRequest: { github: { owner: "org", repo: "shop" } } }] },
    },
    {
      namespace: "a",
      name: "list",
      spec: { generators: [{ list: { elements: [] } }] },
    },
  ];
  it("chooses git generators for a push to their repository", () => {
    const push = { kind: "push" as const, repoUrls: ["http://GIT.example/org/shop"] };
    expect(appSetsForWebhook(sets, push).map((s) => s.name)).toEqual(["dirs"]);
    const other = { kind: "push" as const, repoUrls: ["https://git.example/org/else.git"] };
    expect(appSetsForWebhook(sets, other)).toEqual([]);
  });
  it("chooses pullRequest generators of the provider for its repository", () => {
    const pr = {
      kind: "pullRequest" as const,
      provider: "github" as const,
      repoUrls: ["https://github.com/Org/Shop.git"],
    };
    expect(appSetsForWebhook(sets, pr).map((s) => s.name)).toEqual(["previews"]);
    expect(appSetsForWebhook(sets, { ...pr, provider: "gitea" })).toEqual([]);
    expect(appSetsForWebhook(sets, { ...pr, repoUrls: ["https://github.com/org/other"] })).toEqual(
      [],
    );
  });
});
