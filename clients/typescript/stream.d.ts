// Types of stream.js: mqgate's WebSocket streams (docs/streaming.md), with
// the generated schema's message, result and problem types.
import type { components } from "./schema.js";

type S = components["schemas"];
export type ReceivedMessage = S["ReceivedMessage"];
export type PublishRequest = S["PublishRequest"];
export type PublishResult = S["PublishResult"];
export type HandleResult = S["HandleResult"];
export type Problem = S["Problem"];

/** Receipt handles one settlement frame takes. */
export declare const MAX_HANDLES: number;
export declare const PROTOCOL: "mqgate.v1";

/** A refused upgrade: status 0 when the runtime's WebSocket hides it (browsers). */
export declare class StreamRefused extends Error {
  status: number;
  problem: Problem | undefined;
  retryAfter: number | undefined;
}
/** An error frame answering one frame; the stream goes on. */
export declare class ProblemError extends Error {
  problem: Problem;
  status: number;
}
/** The stream ended before an answer; a publish failing with it may or may not be stored. */
export declare class StreamClosed extends Error {
  code: number;
  reason: string;
}

/** The subprotocol carrying a key for a platform WebSocket: mqgate.key.<base64url>. */
export declare function keySubprotocol(key: string): string;

export interface Limits {
  maxOutstandingMessages: number;
  maxOutstandingBytes: number;
}

declare class Stream {
  /** The server's open frame. */
  readonly open: Record<string, unknown>;
  /** Why the stream ended, once it has. */
  readonly error: Error | undefined;
  /** Close with 1000; calls still waiting fail with StreamClosed. */
  close(): Promise<void>;
}

export declare class Consumer extends Stream {
  readonly group: string;
  readonly limits: Limits;
  /** The last empty frame's reason (NO_MESSAGES, PAUSED, ...) since a delivery. */
  readonly empty: string | undefined;
  receive(): Promise<ReceivedMessage>;
  [Symbol.asyncIterator](): AsyncIterator<ReceivedMessage>;
  /** Acks 1..100 handles. The ack() calls made before the event loop's next turn share one frame
   * (unless opened with gatherAcks: false); each gets the results of its own handles. */
  ack(receiptHandles: string[]): Promise<HandleResult[]>;
  nack(receiptHandles: string[], o?: { delayLevel?: number; reason?: string }): Promise<HandleResult[]>;
  extend(receiptHandles: string[], invisibleSeconds: number): Promise<HandleResult[]>;
  flow(limits: Partial<Limits>): Promise<Limits>;
}

export declare class Publisher extends Stream {
  /** Messages sent and not yet answered (at most the open frame's maxUnconfirmedMessages). */
  readonly unconfirmed: number;
  /** Resolves once the message is durable; waits while the server's limits are reached. */
  publish(message: PublishRequest): Promise<PublishResult>;
  publishBatch(messages: PublishRequest[]): Promise<PublishResult[]>;
}

export declare function consume(
  baseUrl: string,
  group: string,
  o?: {
    key?: string;
    consumerId?: string;
    invisibleSeconds?: number;
    maxOutstandingMessages?: number;
    maxOutstandingBytes?: number;
    timeoutMs?: number;
    /** false: each ack() call in a frame of its own (default true: gathered per turn of the event loop). */
    gatherAcks?: boolean;
  },
): Promise<Consumer>;

export declare function publishStream(
  baseUrl: string,
  topic: string,
  o?: { key?: string; maxUnconfirmedMessages?: number; maxUnconfirmedBytes?: number; timeoutMs?: number },
): Promise<Publisher>;
