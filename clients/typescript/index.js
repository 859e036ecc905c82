// mqgate-client: openapi-fetch typed by schema.d.ts (generated from
// openapi/openapi.json by openapi-typescript; `make sdk-typescript`).
// Types: index.d.ts.
import createFetchClient from "openapi-fetch";

/**
 * createClient returns an openapi-fetch client for an mqgate server.
 * @param {string} baseUrl e.g. "http://localhost:8080"
 * @param {{apiKey?: string} & Omit<import("openapi-fetch").ClientOptions, "baseUrl">} [options]
 *   apiKey is sent as "Authorization: Bearer <key>" (servers with --api-keys)
 * @returns {import("openapi-fetch").Client<import("./schema.js").paths>}
 */
export function createClient(baseUrl, options = {}) {
  const { apiKey, headers, ...rest } = options;
  /** @type {Record<string, string>} */
  const auth = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
  return createFetchClient({
    ...rest,
    baseUrl,
    headers: { ...auth, ...(/** @type {Record<string, string>} */ (headers ?? {})) },
  });
}
