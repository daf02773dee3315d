// Health assessment: pure functions from live objects to Healthy/Progressing/Degraded/
// Suspended/Missing/Unknown, modelled on kstatus and Argo CD's gitops-engine. The only import
// point of src/health.
export type { HealthItem } from "./aggregate.ts";
export { aggregateHealth, HEALTH_ORDER, healthRank } from "./aggregate.ts";
export { aggregateSet, assessSet, type SetHealth } from "./assess.ts";
export {
  CEL_LIMITS,
  celHealth,
  compileExpression,
  compileHealthChecks,
  type HealthCheckSpec,
  type HealthChecks,
} from "./cel.ts";
export { assessHealth, ruleFor, ruleKey } from "./rules.ts";
export type { HealthResult, Rule } from "./util.ts";
export { explainByPods, POD_OWNERS, podSelector } from "./workload-pods.ts";
