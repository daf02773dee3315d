// The HTTP part of plumb: import it from here only.
export { createHttpApp, MAX_BODY_BYTES } from "./app.ts";
export type { AppSummary } from "./appview.ts";
export { sourceOf, summarize } from "./appview.ts";
export type { Caller } from "./auth.ts";
export type { ApiToken, HttpConfig } from "./config.ts";
export { DEFAULT_NAMESPACE, HTTP_ENV_VARS, httpSecrets, parseHttpConfig } from "./config.ts";
export type { Log } from "./errors.ts";
export type { PushRef } from "./match.ts";
export { appMatchesPush, normalizeRepoUrl, qualifyRef } from "./match.ts";
export type { OperationRequest, OperationSink } from "./operations.ts";
export {
  buildOperation,
  describeOperation,
  OperationRefused,
  submitOperation,
} from "./operations.ts";
export { configWarnings, unavailable } from "./readiness.ts";
export type {
  AppEvent,
  AppKey,
  AppStore,
  HttpDeps,
  HttpEnv,
  PullRequestTarget,
} from "./types.ts";
export type { Provider, PullRequestEvent, PushEvent } from "./webhooks.ts";
export { parsePullRequest, parsePush, previewsPullRequest } from "./webhooks.ts";
