import { defineConfig } from "vitest/config";

/**
 * Per-test and per-hook limits. They only end a test that hangs: a machine ten times slower
 * than usual (load 20 on 2 cores) must make the suite slower, never red, so no test or hook
 * may set a shorter one, and no test asserts on how long something took.
 */
const HANG_GUARD_MS = {
  unit: 10 * 60_000,
  e2e: 30 * 60_000,
};

// PLUMB_CLUSTER_NODE=kubelet adds the tests of test/e2e/node, which start a second cluster whose
// node is a real kubelet with containerd (test/cluster/node.sh); without it they are not collected.
const realNode = process.env["PLUMB_CLUSTER_NODE"] === "kubelet";

export default defineConfig({
  test: {
    // Closing (the e2e global teardown stops the control plane) gets as long as a hook.
    teardownTimeout: HANG_GUARD_MS.e2e,
    projects: [
      {
        test: {
          name: "unit",
          // Every test file outside test/e2e is a unit test: one beside its code, wherever that is.
          include: ["**/*.test.ts"],
          exclude: ["test/e2e/**", "**/node_modules/**", "dist/**", ".plumb/**", ".wrangler/**"],
          // promtool, obtained (built from Go modules) before the first test.
          globalSetup: ["test/support/unit-setup.ts"],
          testTimeout: HANG_GUARD_MS.unit,
          hookTimeout: HANG_GUARD_MS.unit,
          environment: "node",
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/*.test.ts", ...(realNode ? ["test/e2e/node/*.test.ts"] : [])],
          globalSetup: ["test/e2e/global-setup.ts"],
          testTimeout: HANG_GUARD_MS.e2e,
          hookTimeout: HANG_GUARD_MS.e2e,
          fileParallelism: false,
          environment: "node",
        },
      },
    ],
  },
});
