// Annotations any App may put on its objects to change how plumb applies and prunes them
// (in the style of Flux's kustomize.toolkit.fluxcd.io/ssa and /prune).

/**
 * `plumb.dev/ssa: IfNotPresent`: apply the object only when it does not exist; once it does,
 * plumb never writes it again and reports no drift on it (Flux: `kustomize.toolkit.fluxcd.io/ssa:
 * IfNotPresent`). For objects someone else owns after creation, such as generated passwords.
 */
export const ANNOTATION_SSA = "plumb.dev/ssa";
export const SSA_IF_NOT_PRESENT = "IfNotPresent";

/**
 * `plumb.dev/prune: disabled`: never delete the object, when it leaves the source or when the
 * App is deleted (Flux: `kustomize.toolkit.fluxcd.io/prune: disabled`). `plumb.dev/prune:
 * "true"` lets plumb prune the kinds it keeps by default (Namespace, PVC, CRD).
 */
export const PRUNE_DISABLED = "disabled";

/**
 * `plumb.dev/generate: "password,token"` on a Secret: when plumb creates it, each listed key of
 * `data` gets 32 random bytes written as 64 lower-case hex characters (safe in URLs). Implies
 * IfNotPresent: a generated value is never replaced.
 */
export const ANNOTATION_GENERATE = "plumb.dev/generate";
