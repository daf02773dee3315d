// Errors the adapters throw and the loop interprets: from the API server, and from a source.

/** metav1.StatusCause: one field the API server refused (Status.details.causes). */
export interface StatusCause {
  /** FieldValueInvalid, FieldValueRequired, FieldValueForbidden, ... */
  reason?: string;
  /** Short by the time it is here (the adapter drops object dumps): "field is immutable". */
  message?: string;
  /** The field path: "spec.template", "spec.selector". */
  field?: string;
}

/**
 * An error from the API server with its HTTP status, Status.reason and, for a 422 Invalid,
 * the fields it refused (Status.details.causes, messages shortened).
 */
export class KubeApiError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly causes: readonly StatusCause[];
  constructor(
    status: number,
    reason: string,
    message: string,
    causes: readonly StatusCause[] = [],
  ) {
    super(message);
    this.name = "KubeApiError";
    this.status = status;
    this.reason = reason;
    this.causes = causes;
  }
}

/** A failure to reach or read a source; `transient` ones are retried with backoff. */
export class SourceError extends Error {
  readonly transient: boolean;
  constructor(message: string, transient: boolean) {
    super(message);
    this.name = "SourceError";
    this.transient = transient;
  }
}

/**
 * A remote destination (spec.destination.cluster) cannot be used. "invalid": its
 * kubeconfig is malformed or asks for what plumb refuses (exec plugins, auth providers, local
 * files, insecure TLS, what the runtime cannot do); "unreachable": the cluster gave no usable
 * answer (connection refused, TLS failure, timeout, 401, 403, 5xx). The message names the
 * field or the cause, never a credential.
 */
export class DestinationError extends Error {
  readonly kind: "invalid" | "unreachable";
  constructor(kind: "invalid" | "unreachable", message: string) {
    super(message);
    this.name = "DestinationError";
    this.kind = kind;
  }
}

/**
 * True for HTTP statuses worth retrying: 408, 429 and 5xx (client-go's retry rules and the Git
 * and registry clients' transient failures).
 */
export function transientStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * The API server's own messages for a request body that does not fit the kind's schema, which
 * it answers with HTTP 500 and no Status reason (apiserver's fieldmanager and
 * runtime.DefaultUnstructuredConverter): "failed to create typed patch object (...): .x: field
 * not declared in schema", "failed to convert new object (...) ... illegal base64 data". The
 * same body fails the same way every time, so it is neither retried nor backed off (kubectl
 * and Flux report it at once); found by sending such bodies to kube-apiserver v1.35.
 */
const REFUSED_BODY = /\bfailed to (create typed (patch|live) object|convert new object)\b/;

/**
 * True when a 500 from the API server is about the object sent, not the server: see
 * {@link REFUSED_BODY}. A 500 with a Status reason (InternalError: etcd, webhooks) is not.
 * @param status the HTTP status
 * @param reason Status.reason: "" or "Unknown" when the body had none
 * @param message Status.message (or a message that contains it)
 */
export function refusedBody(status: number, reason: string, message: string): boolean {
  return status === 500 && (reason === "" || reason === "Unknown") && REFUSED_BODY.test(message);
}
