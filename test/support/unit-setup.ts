// Unit global setup: the programs unit tests run (promtool), obtained before any test starts.
import type { TestProject } from "vitest/node";
import { testTool } from "./tools.ts";

export default async function setup(project: TestProject) {
  project.provide("promtool", await testTool("promtool"));
}
