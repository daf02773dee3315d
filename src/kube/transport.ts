// The HTTP transport to the API server, built on @kubernetes/client-node's configuration:
// on Node the library's own transport (kubeconfig, client certificates, CA); in workerd a
// transport on the global fetch with a bearer token (the library's default, undici, fails there).
import {
  type Configuration,
  createConfiguration,
  type HttpMethod,
  KubeConfig,
  type RequestContext,
  ResponseContext,
  ServerConfiguration,
  wrapHttpLibrary,
} from "@kubernetes/client-node";

export interface KubeResponse {
  status: number;
  /** Parsed JSON body, or the text when it is not JSON. */
  body: unknown;
}

export interface KubeRequest {
  query?: Record<string, string>;
  body?: unknown;
  contentType?: string;
  /** Accept header; application/json unless given (e.g. the Table form kubectl asks for). */
  accept?: string;
}

/** One request to the API server. `path` starts with "/api" or "/apis". Never throws on HTTP status. */
export type KubeTransport = (
  method: string,
  path: string,
  request?: KubeRequest,
) => Promise<KubeResponse>;

/**
 * A transport over a client-node Configuration (auth methods, server, httpApi).
 * Request bodies are JSON; the content type defaults to application/json.
 */
export function transportFromConfiguration(config: Configuration): KubeTransport {
  return async (method, path, request = {}) => {
    const ctx = config.baseServer.makeRequestContext(path, method as HttpMethod);
    ctx.setHeaderParam("Accept", request.accept ?? "application/json");
    for (const [k, v] of Object.entries(request.query ?? {})) ctx.setQueryParam(k, v);
    if (request.body !== undefined) {
      ctx.setHeaderParam("Content-Type", request.contentType ?? "application/json");
      ctx.setBody(JSON.stringify(request.body));
    }
    const auth = config.authMethods.default ?? config.authMethods.BearerToken;
    await auth?.applySecurityAuthentication(ctx);
    const response = await config.httpApi.send(ctx).toPromise();
    const text = await response.body.text();
    let body: unknown = text;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      // not JSON (e.g. a proxy's HTML error page): keep the text
    }
    return { status: response.httpStatusCode, body };
  };
}

/** Node: the configuration of a kubeconfig file (or the default loading rules when undefined). */
export function configurationFromKubeConfig(kubeconfigPath?: string): Configuration {
  const kc = new KubeConfig();
  if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
  else kc.loadFromDefault();
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error("kubeconfig has no current cluster");
  // KubeConfig builds a new TLS agent on every request (a handshake each time); keep the
  // first one, whose CA and client certificate do not change, and let it pool connections.
  // Headers (tokens, exec-plugin credentials) are still applied per request.
  let dispatcher: ReturnType<RequestContext["getDispatcher"]>;
  const auth = {
    getName: () => "kubeconfig",
    async applySecurityAuthentication(ctx: RequestContext) {
      await kc.applySecurityAuthentication(ctx);
      dispatcher ??= ctx.getDispatcher();
      if (dispatcher) ctx.setDispatcher(dispatcher);
    },
  };
  return createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: auth },
  });
}

/**
 * Workers (and any runtime with a standard fetch): bearer-token auth and the global fetch.
 * The server's certificate must be publicly trusted: fetch in workerd does not take a CA.
 */
export function configurationFromToken(
  server: string,
  token: string,
  fetchImpl: typeof fetch = fetch,
): Configuration {
  const httpApi = wrapHttpLibrary({
    async send(request: RequestContext): Promise<ResponseContext> {
      const resp = await fetchImpl(request.getUrl(), {
        method: request.getHttpMethod().toString(),
        headers: request.getHeaders(),
        body: (request.getBody() as string | undefined) ?? null,
      });
      const headers: Record<string, string> = {};
      resp.headers.forEach((value, name) => {
        headers[name] = value;
      });
      const text = await resp.text();
      return new ResponseContext(resp.status, headers, {
        text: async () => text,
        binary: async () => new TextEncoder().encode(text) as unknown as Buffer,
        stream: () => null,
      });
    },
  });
  return createConfiguration({
    baseServer: new ServerConfiguration(server.replace(/\/+$/, ""), {}),
    authMethods: {
      default: {
        getName: () => "BearerToken",
        applySecurityAuthentication: (ctx: RequestContext) => {
          ctx.setHeaderParam("Authorization", `Bearer ${token}`);
        },
      },
    },
    httpApi,
  });
}

/**
 * Node: the namespace of the kubeconfig's current context (kubectl's default namespace), or
 * "default" when the context names none.
 */
export function kubeconfigNamespace(kubeconfigPath?: string): string {
  const kc = new KubeConfig();
  if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
  else kc.loadFromDefault();
  return kc.getContextObject(kc.getCurrentContext())?.namespace || "default";
}
