// Errors the adapters throw and the loop interprets: from the API server, and from a source.

/** An error from the API server with its HTTP status and Status.reason. */
export class KubeApiError extends Error {
  readonly status: number;
  readonly reason: string;
  constructor(status: number, reason: string, message: string) {
    super(message);
    this.name = "KubeApiError";
    this.status = status;
    this.reason = reason;
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
 * True for HTTP statuses worth retrying: 408, 429 and 5xx (client-go's retry rules and the Git
 * and registry clients' transient failures).
 */
export function transientStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}
