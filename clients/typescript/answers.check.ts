// Strict type-check of the API's answers (tsc -p tsconfig.json, strict):
// a client reads what the server always sends without undefined checks.
// Each function fails to compile when the OpenAPI document stops listing
// a member as required (TS2322: 'string | undefined' is not assignable to
// 'string'), as the dead-letter answer did. The Go side
// (api/openapi_people_test.go, TestOpenAPIAnswersRequired) checks that
// every answer schema derives its required list from the server's types.
import type { components } from "./schema.js";

type S = components["schemas"];

export function deadLetters(page: S["DLQPage"]): Array<[string, string, number, string, string]> {
  return page.messages.map((l): [string, string, number, string, string] => [
    l.messageId, l.topic, l.reconsumeTimes, l.bornAt, l.storedAt,
  ]);
}

export function job(j: S["Job"]): [string, string, string, number, number, string] {
  return [j.id, j.kind, j.state, j.matched, j.moved, j.startedAt];
}

export function dryRun(r: S["DryRunResult"]): number {
  return r.matched;
}

export function corrupt(list: S["CorruptList"]): Array<[string, number, number, number, string, string]> {
  return list.messages.map((m): [string, number, number, number, string, string] => [
    m.topic, m.queueId, m.queueOffset, m.commitLogOffset, m.reason, m.detectedAt,
  ]);
}

export function topic(t: S["Topic"]): [string, number, number] {
  return [t.name, t.queues, t.retentionHours];
}

export function published(r: S["PublishResult"]): [string, string] {
  return [r.messageId, r.topic];
}

export function received(r: S["ReceiveResponse"]): Array<[string, string, string]> {
  return r.messages.map((m): [string, string, string] => [m.messageId, m.receiptHandle, m.topic]);
}

export function offsets(o: S["OffsetList"]): Array<[string, number, number, number]> {
  return o.offsets.map((q): [string, number, number, number] => [q.topic, q.queueId, q.committedOffset, q.lag]);
}

// The single publish body has no deduplicationId (batch entries only).
export const single: S["PublishMessageRequest"] = { body: "x" };
// @ts-expect-error deduplicationId is not a member of a single publish
export const singleWithDedup: S["PublishMessageRequest"] = { body: "x", deduplicationId: "d" };
export const entry: S["PublishRequest"] = { body: "x", deduplicationId: "d" };
