// Live round trip of the stream helpers (stream.js, on `ws` in Node 20)
// against a real mqgate: `make sdk-typescript-test` type-checks this file
// (tsc, checkJs, strict) and runs it with `node --test` under
// clients/with-server.sh, which sets MQGATE_URL. The tests run in order and
// share one topic and group.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createClient } from "./index.js";
import { ProblemError, StreamRefused, consume, publishStream } from "./stream.js";

const url = process.env.MQGATE_URL;
if (!url) throw new Error("MQGATE_URL is not set (run through clients/with-server.sh)");
const client = createClient(url);
const TOPIC = "ts-stream";
const GROUP = "ts-stream-g";
const N = 12;

test("publish with confirms and a problem frame", async () => {
  await client.PUT("/v1/topics/{topic}", { params: { path: { topic: TOPIC } }, body: { queues: 2 } });
  await client.PUT("/v1/groups/{group}", {
    params: { path: { group: GROUP } },
    body: { subscriptions: [{ topic: TOPIC }], consumeFrom: { position: "FIRST_OFFSET" } },
  });
  const p = await publishStream(url, TOPIC, { maxUnconfirmedMessages: 4 });
  try {
    assert.equal(p.open.maxUnconfirmedMessages, 4);
    // N in flight through a window of 4, confirms matched by id.
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) => p.publish({ body: `m-${i}`, deduplicationId: `ts-${i}` })),
    );
    assert.ok(p.unconfirmed === 0);
    const ids = results.map((r) => r.messageId);
    assert.equal(new Set(ids).size, N);
    const again = await p.publish({ body: "m-3", deduplicationId: "ts-3" });
    assert.equal(again.messageId, ids[3]);
    assert.equal(again.replayed, true);
    await assert.rejects(p.publish({ body: "" }), (e) => e instanceof ProblemError && e.status === 400);
    // The stream goes on after the error frame.
    const batch = await p.publishBatch([{ body: "b-1" }, { body: "b-2" }]);
    assert.equal(batch.length, 2);
  } finally {
    await p.close();
  }
});

test("consume, ack, nack, extend, flow", async () => {
  const c = await consume(url, GROUP, { maxOutstandingMessages: 3, invisibleSeconds: 30 });
  try {
    assert.equal(c.limits.maxOutstandingMessages, 3);
    const got = [await c.receive(), await c.receive(), await c.receive()];
    // No fourth while three are outstanding.
    const next = c.receive();
    const fourth = await Promise.race([next, new Promise((r) => setTimeout(() => r("none"), 500))]);
    assert.equal(fourth, "none");
    assert.deepEqual((await c.ack([got[0].receiptHandle])).map((r) => r.status), ["ok"]);
    assert.equal((await c.nack([got[1].receiptHandle], { delayLevel: 1, reason: "ts later" }))[0].status, "ok");
    const ext = await c.extend([got[2].receiptHandle], 120);
    assert.equal(ext[0].status, "ok");
    assert.ok(ext[0].invisibleUntil);
    assert.equal((await c.ack(["forged"]))[0].status, "invalid");
    assert.equal((await c.flow({ maxOutstandingMessages: 50 })).maxOutstandingMessages, 50);
    // The receive raced above gets the next delivery.
    const first = await next;
    await c.ack([first.receiptHandle]);
    const seen = new Set([first.messageId]);
    for await (const m of c) {
      seen.add(m.messageId);
      await c.ack([m.receiptHandle]);
      if (seen.size === N + 2 - 2) break;
    }
    assert.ok(seen.has(got[1].messageId), "the nacked message came back");
    assert.ok(!seen.has(got[2].messageId), "the extended message stayed away");
  } finally {
    await c.close();
  }
});

/** The consume frames the server has read (mqgate_stream_frames_total). */
async function framesIn() {
  const text = await (await fetch(url + "/metrics")).text();
  const line = text.split("\n").find((l) => l.startsWith("mqgate_stream_frames_total{") && l.includes('direction="in"') && l.includes('kind="consume"'));
  assert.ok(line, "no mqgate_stream_frames_total for consume streams in /metrics");
  return Number(line.slice(line.lastIndexOf(" ") + 1));
}

test("the acks of one turn share a frame", async () => {
  const topic = "ts-gather";
  const group = "ts-gather-g";
  await client.PUT("/v1/topics/{topic}", { params: { path: { topic } }, body: { queues: 2 } });
  await client.PUT("/v1/groups/{group}", {
    params: { path: { group } },
    body: { subscriptions: [{ topic }], consumeFrom: { position: "FIRST_OFFSET" } },
  });
  await client.POST("/v1/topics/{topic}/messages/batch", {
    params: { path: { topic } },
    body: { messages: Array.from({ length: 16 }, (_, i) => ({ body: `g-${i}` })) },
  });
  const c = await consume(url, group, { maxOutstandingMessages: 100, invisibleSeconds: 60 });
  /** @type {string[]} */
  let hs = [];
  try {
    const got = [];
    for (let i = 0; i < 16; i++) got.push(await c.receive());
    hs = got.map((m) => m.receiptHandle);
    // Ten acks of one handle each, given in one turn: one frame, each
    // call with its own handle's result.
    let before = await framesIn();
    const res = await Promise.all(hs.slice(0, 10).map((h) => c.ack([h])));
    assert.equal((await framesIn()) - before, 1);
    assert.deepEqual(res.map((r) => r[0].receiptHandle), hs.slice(0, 10));
    assert.ok(res.every((r) => r.length === 1 && r[0].status === "ok"));
    // A handle over the length limit makes the server refuse the whole
    // frame (400): each call's acks go again on their own, and only that
    // call gets the problem.
    before = await framesIn();
    const [good, bad, good2] = [c.ack([hs[10]]), c.ack(["x".repeat(1100)]), c.ack([hs[11], hs[12]])];
    // Its handler is attached at once: bad may be refused before good answers.
    const badRefused = assert.rejects(bad, (e) => e instanceof ProblemError && e.status === 400);
    assert.deepEqual((await good).map((r) => r.status), ["ok"]);
    assert.deepEqual((await good2).map((r) => r.status), ["ok", "ok"]);
    await badRefused;
    assert.equal((await framesIn()) - before, 4); // the gathered frame, then one per call
    // A nack given after an ack in the same turn goes after it: the ack
    // is ok, and the nack finds the handle settled.
    const [acked, nacked] = [c.ack([hs[13]]), c.nack([hs[13]], { delayLevel: 1 })];
    assert.equal((await acked)[0].status, "ok");
    assert.notEqual((await nacked)[0].status, "ok");
  } finally {
    await c.close();
  }
  // The handles stay valid on another stream; without gathering each call
  // is a frame of its own.
  const apart = await consume(url, group, { gatherAcks: false });
  try {
    const before = await framesIn();
    const res = await Promise.all([apart.ack([hs[14]]), apart.ack([hs[15]]), apart.ack(["forged"])]);
    assert.deepEqual(res.map((r) => r[0].status), ["ok", "ok", "invalid"]);
    assert.equal((await framesIn()) - before, 3);
  } finally {
    await apart.close();
  }
});

test("a refused upgrade carries the problem", async () => {
  await assert.rejects(consume(url, "no-such-group"), (e) => e instanceof StreamRefused && e.status === 404 && e.problem?.status === 404);
});
