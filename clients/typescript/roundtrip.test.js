// Live round trip of the TypeScript SDK (openapi-fetch typed by the
// generated schema.d.ts) against a real mqgate: `make sdk-typescript-test`
// type-checks this file with tsc (checkJs, strict) and runs it with
// `node --test` under clients/with-server.sh, which starts bin/mqgate on
// 127.0.0.1 with a fresh data directory and sets MQGATE_URL.
//
// The tests run in order and share one topic and one group: each step uses
// what the previous one left.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createClient } from "./index.js";

/** @typedef {import("./index.js").Schemas} S */

const TOPIC = "sdk-orders";
const GROUP = "sdk-billing";
const DEADLINE_MS = 15000; // for every poll below
const BIN = Buffer.from([0, 1, 2, 0xff]);

const url = process.env.MQGATE_URL;
if (!url) throw new Error("MQGATE_URL is not set (run through clients/with-server.sh)");
const client = createClient(url);

/** @type {Set<string>} */
const ids = new Set();
/** @type {S["ReceivedMessage"][]} */
let received = [];
let dead = "";

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Receives until `want` messages arrived or the deadline passed.
 * @param {number} want
 */
async function receiveUntil(want) {
  /** @type {S["ReceivedMessage"][]} */
  const got = [];
  const end = Date.now() + DEADLINE_MS;
  while (got.length < want && Date.now() < end) {
    const { data, error, response } = await client.POST("/v1/groups/{group}/receive", {
      params: { path: { group: GROUP } },
      body: { maxMessages: 10, waitSeconds: 2 },
    });
    assert.equal(response.status, 200, JSON.stringify(error));
    assert.ok(data);
    got.push(...data.messages);
  }
  return got;
}

/** @param {string[]} receiptHandles */
async function ack(receiptHandles) {
  const { data, response } = await client.POST("/v1/groups/{group}/ack", {
    params: { path: { group: GROUP } },
    body: { receiptHandles },
  });
  assert.equal(response.status, 200);
  assert.deepEqual(data?.results.map((r) => r.status), receiptHandles.map(() => "ok"));
}

test("create topic", async () => {
  const { data, response } = await client.PUT("/v1/topics/{topic}", {
    params: { path: { topic: TOPIC } },
    body: { queues: 4 },
  });
  assert.equal(response.status, 201);
  assert.equal(data?.name, TOPIC);
  assert.equal(data?.queues, 4);
});

test("publish single", async () => {
  const { data, response } = await client.POST("/v1/topics/{topic}/messages", {
    params: { path: { topic: TOPIC } },
    body: { body: "order 17 created", tags: "created", keys: ["order-17"], shardingKey: "customer-9" },
  });
  assert.equal(response.status, 201);
  assert.ok(data?.messageId);
  assert.equal(data.topic, TOPIC);
  ids.add(data.messageId);
});

test("publish batch", async () => {
  const { data, response } = await client.POST("/v1/topics/{topic}/messages/batch", {
    params: { path: { topic: TOPIC } },
    body: {
      messages: [
        { body: "batch 0", keys: ["batch-1"] },
        { body: "batch 1", keys: ["batch-1"] },
        { bodyBase64: BIN.toString("base64"), tags: "binary" },
      ],
    },
  });
  assert.equal(response.status, 201);
  assert.equal(data?.results.length, 3);
  for (const r of data.results) {
    assert.ok(r.messageId);
    ids.add(r.messageId);
  }
});

test("create group from FIRST_OFFSET", async () => {
  const { data, response } = await client.PUT("/v1/groups/{group}", {
    params: { path: { group: GROUP } },
    body: { subscriptions: [{ topic: TOPIC }], consumeFrom: { position: "FIRST_OFFSET" }, invisibleSeconds: 30 },
  });
  assert.equal(response.status, 201);
  assert.equal(data?.name, GROUP);
  assert.equal(data?.invisibleSeconds, 30);
});

test("receive", async () => {
  received = await receiveUntil(4);
  assert.deepEqual(new Set(received.map((m) => m.messageId)), ids);
  for (const m of received) {
    assert.equal(m.topic, TOPIC);
    assert.ok(m.receiptHandle);
    assert.equal(m.reconsumeTimes, 0);
    if (m.tags === "binary") {
      assert.equal(m.body, undefined);
      assert.deepEqual(Buffer.from(m.bodyBase64 ?? "", "base64"), BIN);
    }
    if (m.tags === "created") {
      assert.equal(m.body, "order 17 created");
      assert.deepEqual(m.keys, ["order-17"]);
      assert.equal(m.shardingKey, "customer-9");
    }
  }
});

test("ack", async () => {
  await ack(received.slice(0, 2).map((m) => m.receiptHandle));
});

test("extend", async () => {
  const m = received[2];
  const { data, response } = await client.POST("/v1/groups/{group}/extend", {
    params: { path: { group: GROUP } },
    body: { receiptHandles: [m.receiptHandle], invisibleSeconds: 600 },
  });
  assert.equal(response.status, 200);
  const r = data?.results[0];
  assert.equal(r?.status, "ok");
  assert.ok(Date.parse(r.invisibleUntil ?? "") - Date.now() > 590_000, r.invisibleUntil);
  await ack([m.receiptHandle]);
});

test("nack to the DLQ (delayLevel -1)", async () => {
  const m = received[3];
  const { data, response } = await client.POST("/v1/groups/{group}/nack", {
    params: { path: { group: GROUP } },
    body: { receiptHandles: [m.receiptHandle], delayLevel: -1, reason: "sdk test" },
  });
  assert.equal(response.status, 200);
  assert.equal(data?.results[0].status, "ok");
  dead = m.messageId;
});

test("offsets", async () => {
  const end = Date.now() + DEADLINE_MS;
  for (;;) { // acks reach the committed offset within a second
    const { data, response } = await client.GET("/v1/groups/{group}/offsets", {
      params: { path: { group: GROUP } },
    });
    assert.equal(response.status, 200);
    assert.ok(data);
    const mine = data.offsets.filter((o) => o.topic === TOPIC);
    const total = mine.reduce((n, o) => n + o.maxOffset, 0);
    if (total === 4 && mine.every((o) => o.lag === 0 && o.inFlight === 0 && o.committedOffset === o.maxOffset)) break;
    assert.ok(Date.now() < end, `offsets not settled: ${JSON.stringify(data)}`);
    await sleep(100);
  }
});

test("list the DLQ", async () => {
  const end = Date.now() + DEADLINE_MS;
  /** @type {S["DeadLetter"][]} */
  let messages = [];
  while (messages.length === 0) {
    const { data, response } = await client.GET("/v1/groups/{group}/dlq", {
      params: { path: { group: GROUP }, query: { limit: 10 } },
    });
    assert.equal(response.status, 200);
    messages = data?.messages ?? [];
    if (messages.length) break;
    assert.ok(Date.now() < end, "the nacked message did not reach the DLQ");
    await sleep(100);
  }
  assert.equal(messages.length, 1);
  assert.equal(messages[0].messageId, dead);
  assert.equal(messages[0].lastReason, "sdk test");
});

test("redrive", async () => {
  const { data, response } = await client.POST("/v1/groups/{group}/dlq/redrive", {
    params: { path: { group: GROUP } },
    body: { messageIds: [dead] },
  });
  assert.equal(response.status, 200);
  assert.ok(data && "redriven" in data);
  assert.equal(data.redriven, 1);
  const got = await receiveUntil(1);
  assert.deepEqual(got.map((m) => m.messageId), [dead]);
  await ack([got[0].receiptHandle]);
});

test("problem+json error", async () => {
  const { data, error, response } = await client.PUT("/v1/groups/{group}", {
    params: { path: { group: "bad!name" } },
    body: { subscriptions: [{ topic: TOPIC }] },
  });
  assert.equal(data, undefined);
  assert.equal(response.status, 400);
  assert.match(response.headers.get("content-type") ?? "", /^application\/problem\+json/);
  /** @type {import("./index.js").Problem | undefined} */
  const p = error;
  assert.equal(p?.type, "urn:mqgate:problem:invalid");
  assert.equal(p?.title, "Invalid request");
  assert.equal(p?.status, 400);
  assert.deepEqual(p?.errors?.map((e) => e.field), ["group"]);
});
