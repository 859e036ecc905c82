// Types of index.js: the openapi-fetch client over the generated paths.
import type { Client, ClientOptions } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";
export type Schemas = components["schemas"];
/** An RFC 9457 problem+json answer (every 4xx/5xx of the API). */
export type Problem = Schemas["Problem"];

export declare function createClient(
  baseUrl: string,
  options?: { apiKey?: string } & Omit<ClientOptions, "baseUrl">,
): Client<paths>;
