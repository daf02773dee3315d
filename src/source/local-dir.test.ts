import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GitSource } from "../app/index.ts";
import { createLocalGitPort, localRevision } from "./local-dir.ts";

const SOURCE = {
  url: "https://git.example.com/org/repo.git",
  ref: "main",
  path: "ignored",
} as GitSource;
let root: string;

function write(files: Record<string, string>) {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "plumb-local-"));
  write({
    ".git/HEAD": "ref: refs/heads/main\n",
    "node_modules/x/index.yaml": "not: read\n",
    "plain/b.yaml": "kind: B\n",
    "plain/a/c.json": "{}",
    "plain/.github/ci.yml": "hidden: true\n",
    "plain/README.md": "# not a manifest\n",
    "base/kustomization.yaml": "resources: [cm.yaml]\n",
    "base/cm.yaml": "kind: ConfigMap\n",
    "overlays/dev/kustomization.yaml": "resources: [../../base]\n",
    "chart/Chart.yaml": "name: c\n",
    "nested/x.yaml": "kind: X\n",
    "nested/sub/kustomization.yaml": "resources: []\n",
  });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("createLocalGitPort", () => {
  it("reads plain manifests under the directory as the Git port does", async () => {
    const port = createLocalGitPort(join(root, "plain"));
    expect(await port.resolve(SOURCE, undefined)).toBe(`local:${join(root, "plain")}`);
    expect(await port.fetchSource!(SOURCE, "local", undefined)).toEqual({
      kind: "manifests",
      files: [
        { path: "a/c.json", content: "{}" },
        { path: "b.yaml", content: "kind: B\n" },
      ],
    });
  });

  it("gives a Kustomize overlay the files of its Git working tree, so ../../base resolves", async () => {
    const fetched = await createLocalGitPort(join(root, "overlays/dev")).fetchSource!(
      SOURCE,
      "local",
      undefined,
    );
    expect(fetched.kind).toBe("kustomize");
    if (fetched.kind === "manifests") throw new Error("not an engine source");
    expect(fetched.path).toBe("overlays/dev");
    const paths = fetched.files.map((f) => f.path);
    expect(paths).toContain("base/cm.yaml");
    expect(paths).toContain("overlays/dev/kustomization.yaml");
    expect(paths.some((p) => p.startsWith(".git/") || p.startsWith("node_modules/"))).toBe(false);
    const cm = fetched.files.find((f) => f.path === "base/cm.yaml");
    expect(new TextDecoder().decode(cm?.data)).toBe("kind: ConfigMap\n");
  });

  it("reads a Helm chart directory as a chart", async () => {
    const fetched = await createLocalGitPort(join(root, "chart")).fetchSource!(
      SOURCE,
      "local",
      undefined,
    );
    expect(fetched).toMatchObject({ kind: "helm", path: "chart" });
  });

  it("refuses a kustomization below the directory, a missing directory and too many files", async () => {
    await expect(
      createLocalGitPort(join(root, "nested")).fetchSource!(SOURCE, "local", undefined),
    ).rejects.toThrow(
      'sub/kustomization.yaml found in "' +
        join(root, "nested") +
        '": a Kustomize overlay or Helm chart is rendered only when --path is its own directory, not a folder above it',
    );
    const gone = join(root, "nosuch");
    await expect(createLocalGitPort(gone).resolve(SOURCE, undefined)).rejects.toThrow(
      `--path ${gone}: not a directory`,
    );
    await expect(
      createLocalGitPort(join(root, "plain"), { maxFiles: 1 }).fetchSource!(
        SOURCE,
        "local",
        undefined,
      ),
    ).rejects.toThrow("more than 1 manifest files under");
    expect(localRevision("/a/b/../c")).toBe("local:/a/c");
  });
});
