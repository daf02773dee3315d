import { defineConfig } from "vitest/config";

// PLUMB_CLUSTER_NODE=kubelet adds the tests of test/e2e/node, which start a second cluster whose
// node is a real kubelet with containerd (test/cluster/node.sh); without it they are not collected.
const realNode = process.env["PLUMB_CLUSTER_NODE"] === "kubelet";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          // Every test file outside test/e2e is a unit test: one beside its code, wherever that is.
          include: ["**/*.test.ts"],
          exclude: ["test/e2e/**", "**/node_modules/**", "dist/**", ".plumb/**", ".wrangler/**"],
          environment: "node",
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/*.test.ts", ...(realNode ? ["test/e2e/node/*.test.ts"] : [])],
          globalSetup: ["test/e2e/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          fileParallelism: false,
          environment: "node",
        },
      },
    ],
  },
});
