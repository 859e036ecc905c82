// Thin helpers for mqgate's WebSocket streams (docs/streaming.md,
// subprotocol mqgate.v1): a consume stream pushes deliveries and answers
// ack, nack, extend and flow frames; a publish stream answers each publish
// with a confirm once the message is durable. Every frame sent carries an
// id and its answer is matched by it. Hand-written; types in stream.d.ts.
//
// Node uses the `ws` package (the key goes in an Authorization header); a
// runtime with a platform WebSocket (browsers, Node 22+, Deno) uses that,
// and the key goes in the `mqgate.key.<base64url>` subprotocol, since a
// platform WebSocket cannot set headers.

export const PROTOCOL = "mqgate.v1";

/** Receipt handles one settlement frame takes (the server's core.MaxHandles). */
export const MAX_HANDLES = 100;

/** Runs f once what is running now, and the promise callbacks it queued, are done. */
const soon = globalThis.setImmediate ?? ((/** @type {() => void} */ f) => setTimeout(f, 0));

/** A refused upgrade: the HTTP status and problem+json body (0/undefined when the runtime hides them). */
export class StreamRefused extends Error {
  /** @param {number} status @param {any} problem @param {number | undefined} retryAfter */
  constructor(status, problem, retryAfter) {
    super(`stream refused: HTTP ${status}${problem ? `: ${problem.title}: ${problem.detail}` : ""}`);
    this.name = "StreamRefused";
    this.status = status;
    this.problem = problem;
    this.retryAfter = retryAfter;
  }
}

/** An error frame answering one frame (RFC 9457 problem); the stream goes on. */
export class ProblemError extends Error {
  /** @param {any} problem */
  constructor(problem) {
    super(`${problem?.status} ${problem?.title}: ${problem?.detail}`);
    this.name = "ProblemError";
    this.problem = problem;
    this.status = problem?.status;
  }
}

/** The stream ended before an answer. A publish failing with it may or may not be stored. */
export class StreamClosed extends Error {
  /** @param {number} code @param {string} reason */
  constructor(code, reason) {
    super(`stream closed: ${code} ${reason}`.trim());
    this.name = "StreamClosed";
    this.code = code;
    this.reason = reason;
  }
}

/** @param {string} key */
export function keySubprotocol(key) {
  const b64 = btoa(String.fromCharCode(...new TextEncoder().encode(key)));
  return "mqgate.key." + b64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * @param {string} baseUrl @param {string} path @param {Record<string, any>} query
 */
function wsUrl(baseUrl, path, query) {
  const u = new URL(baseUrl.replace(/\/+$/, "") + path);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) u.searchParams.set(k, String(v));
  return u.toString();
}

/** @typedef {{ws: any, open: any, buffered: string[], detach: () => void}} Dialed */

/**
 * Opens the socket and waits for the open frame. Frames after it that
 * arrive in the same read are kept in buffered until the stream object
 * takes over (detach).
 * @param {string} url @param {string | undefined} key @param {number} timeoutMs
 * @returns {Promise<Dialed>}
 */
async function dial(url, key, timeoutMs) {
  /** @type {any} */
  let ws;
  const platform = /** @type {any} */ (globalThis).WebSocket;
  if (platform) {
    ws = new platform(url, key ? [PROTOCOL, keySubprotocol(key)] : [PROTOCOL]);
  } else {
    const { WebSocket } = await import("ws");
    ws = new WebSocket(url, [PROTOCOL], {
      headers: key ? { Authorization: `Bearer ${key}`, "User-Agent": "mqgate-stream-js" } : { "User-Agent": "mqgate-stream-js" },
      maxPayload: 0, // deliveries are bounded by the stream's byte limit
    });
  }
  return await new Promise((resolve, reject) => {
    /** @type {string[]} */
    const buffered = [];
    let opened = false;
    const timer = setTimeout(() => fail(new Error(`no open frame within ${timeoutMs} ms`)), timeoutMs);
    /** @param {Error} err */
    const fail = (err) => {
      clearTimeout(timer);
      try {
        ws.close();
      } catch {}
      reject(err);
    };
    if (!platform) {
      ws.on("unexpected-response", (/** @type {any} */ req, /** @type {any} */ res) => {
        /** @type {Buffer[]} */
        const chunks = [];
        res.on("data", (/** @type {Buffer} */ c) => chunks.push(c));
        res.on("end", () => {
          let problem;
          try {
            problem = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          } catch {}
          const ra = Number(res.headers["retry-after"]);
          clearTimeout(timer);
          req.destroy();
          reject(new StreamRefused(res.statusCode, problem, Number.isFinite(ra) ? ra : undefined));
        });
      });
    }
    ws.addEventListener("open", () => {
      if (ws.protocol !== PROTOCOL) fail(new Error(`the server chose subprotocol ${JSON.stringify(ws.protocol)}, not ${PROTOCOL}`));
    });
    /** @param {any} ev */
    const onMessage = (ev) => {
      if (typeof ev.data !== "string") return;
      if (opened) {
        buffered.push(ev.data); // frames after open, before the stream object exists
        return;
      }
      let f;
      try {
        f = JSON.parse(ev.data);
      } catch {}
      if (f?.type !== "open") return fail(new Error(`first frame is ${f?.type}, not open`));
      opened = true;
      clearTimeout(timer);
      resolve({ ws, open: f, buffered, detach: () => ws.removeEventListener("message", onMessage) });
    };
    ws.addEventListener("message", onMessage);
    ws.addEventListener("error", () => {
      if (!opened) fail(new StreamRefused(0, undefined, undefined)); // the platform WebSocket hides the status
    });
    ws.addEventListener("close", (/** @type {any} */ ev) => {
      if (!opened) fail(new StreamClosed(ev.code, ev.reason));
    });
  });
}

/** What both streams share: the socket and the answers awaited by id. */
class Stream {
  /** @param {Dialed} d */
  constructor(d) {
    this.ws = d.ws;
    /** The server's open frame (limits in force, stream name). */
    this.open = d.open;
    this.nextId = 0;
    /** @type {Map<string, {resolve: (v: any) => void, reject: (e: any) => void, convert: (f: any) => any}>} */
    this.pending = new Map();
    /** @type {Error | undefined} why the stream ended */
    this.error = undefined;
    this.closing = false;
    /** @type {Promise<void>} */
    this.ended = new Promise((resolve) => {
      this.ws.addEventListener("close", (/** @type {any} */ ev) => {
        this.end(this.closing ? new StreamClosed(1000, "closed by the client") : new StreamClosed(ev.code, ev.reason));
        resolve();
      });
    });
    this.ws.addEventListener("message", (/** @type {any} */ ev) => {
      if (typeof ev.data === "string") this.frame(ev.data);
    });
  }

  /** Takes over from dial: the frames that came with the open frame, once the subclass is ready. @param {Dialed} d */
  start(d) {
    d.detach();
    for (const raw of d.buffered) this.frame(raw);
  }

  /** @param {string} raw */
  frame(raw) {
    let f;
    try {
      f = JSON.parse(raw);
    } catch {
      return;
    }
    if (f.type === "results" || f.type === "confirm" || f.type === "flow" || f.type === "error") {
      const p = this.pending.get(String(f.id));
      if (!p) return;
      this.pending.delete(String(f.id));
      if (f.type === "error") p.reject(new ProblemError(f.problem));
      else p.resolve(p.convert(f));
    } else this.onFrame(f);
  }

  /** @param {any} _f */
  onFrame(_f) {}

  /** @param {Error} err */
  end(err) {
    this.error = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.onEnd();
  }

  onEnd() {}

  /**
   * @param {Record<string, any>} frame @param {(f: any) => any} convert
   * @returns {Promise<any>}
   */
  send(frame, convert) {
    if (this.error) return Promise.reject(this.error);
    const id = (++this.nextId).toString(36);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, convert });
      this.ws.send(JSON.stringify({ ...frame, id }));
    });
  }

  /** Closes with 1000 and waits for the end; calls still waiting fail with StreamClosed. */
  async close() {
    this.closing = true;
    this.ws.close(1000);
    await this.ended;
  }
}

/** @typedef {{handles: string[], waiters: {n: number, resolve: (v: any) => void, reject: (e: any) => void}[]}} AckGather */

// Acks are gathered: the ack() calls made before the event loop's next
// turn (a for-await loop working through the messages of one frame, or
// tasks settling side by side) go out as one ack frame of up to
// MAX_HANDLES handles, and each call gets the results of its own
// handles. Any other frame first sends the acks gathered before it, so an
// ack never passes a nack, extend or flow sent after it.
export class Consumer extends Stream {
  /** @param {Dialed} d @param {string} group @param {boolean} gatherAcks */
  constructor(d, group, gatherAcks) {
    super(d);
    this.gatherAcks = gatherAcks;
    /** @type {AckGather | undefined} the acks of this turn, not yet sent */
    this.gather = undefined;
    this.group = d.open.group || group;
    /** @type {any[]} */
    this.queue = [];
    /** @type {((m: any) => void)[]} */
    this.waiters = [];
    /** @type {string | undefined} the last empty frame's reason since a delivery */
    this.empty = undefined;
    this.limits = { maxOutstandingMessages: d.open.maxOutstandingMessages, maxOutstandingBytes: d.open.maxOutstandingBytes };
    this.start(d);
  }

  /** @param {any} f */
  onFrame(f) {
    if (f.type === "messages") {
      this.empty = undefined;
      for (const m of f.messages ?? []) {
        const w = this.waiters.shift();
        if (w) w(m);
        else this.queue.push(m);
      }
    } else if (f.type === "empty") this.empty = f.empty?.reason;
  }

  onEnd() {
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  /** The next delivery; after the stream ended (and what was queued), its StreamClosed. */
  async receive() {
    if (this.queue.length) return this.queue.shift();
    if (this.error) throw this.error;
    const m = await new Promise((resolve) => this.waiters.push(resolve));
    if (m === undefined) throw this.error;
    return m;
  }

  async *[Symbol.asyncIterator]() {
    for (;;) {
      try {
        yield await this.receive();
      } catch (e) {
        if (this.closing) return;
        throw e;
      }
    }
  }

  /** @param {Record<string, any>} frame @param {(f: any) => any} convert */
  send(frame, convert) {
    this.sendGathered();
    return super.send(frame, convert);
  }

  /** Acks 1..MAX_HANDLES handles; gathered with the other acks of this turn (above). @param {string[]} receiptHandles */
  ack(receiptHandles) {
    const n = receiptHandles.length;
    if (!this.gatherAcks || n === 0 || n > MAX_HANDLES) return this.send({ type: "ack", receiptHandles }, (f) => f.results);
    if (this.error) return Promise.reject(this.error);
    if (this.gather && this.gather.handles.length + n > MAX_HANDLES) this.sendGathered(); // full: these open the next
    const g = this.gather ?? this.openGather();
    return new Promise((resolve, reject) => {
      g.handles.push(...receiptHandles);
      g.waiters.push({ n, resolve, reject });
    });
  }

  /** A new gather, sent at the next turn unless a full gather or another frame sends it first. @returns {AckGather} */
  openGather() {
    const g = (this.gather = { handles: [], waiters: [] });
    soon(() => {
      if (this.gather === g) this.sendGathered();
    });
    return g;
  }

  sendGathered() {
    const g = this.gather;
    this.gather = undefined;
    if (g) this.sendAcks(g);
  }

  /** @param {AckGather} g */
  sendAcks(g) {
    super.send({ type: "ack", receiptHandles: g.handles }, (f) => f.results).then(
      (/** @type {any[]} */ rs) => {
        let off = 0;
        for (const w of g.waiters) w.resolve(rs.slice(off, (off += w.n)));
      },
      (e) => {
        if (g.waiters.length > 1 && e instanceof ProblemError && e.status < 500) {
          // Refused whole (a 4xx: one caller's handle is malformed): that
          // caller's fault, not the others'. Each caller's handles go
          // again in a frame of their own, for its own answer.
          let off = 0;
          for (const w of g.waiters) this.sendAcks({ handles: g.handles.slice(off, (off += w.n)), waiters: [w] });
        } else for (const w of g.waiters) w.reject(e);
      },
    );
  }

  /** @param {string[]} receiptHandles @param {{delayLevel?: number, reason?: string}} [o] */
  nack(receiptHandles, o = {}) {
    return this.send({ type: "nack", receiptHandles, ...o }, (f) => f.results);
  }

  /** @param {string[]} receiptHandles @param {number} invisibleSeconds */
  extend(receiptHandles, invisibleSeconds) {
    return this.send({ type: "extend", receiptHandles, invisibleSeconds }, (f) => f.results);
  }

  /** @param {{maxOutstandingMessages?: number, maxOutstandingBytes?: number}} limits */
  flow(limits) {
    return this.send({ type: "flow", ...limits }, (f) => {
      this.limits = { maxOutstandingMessages: f.maxOutstandingMessages, maxOutstandingBytes: f.maxOutstandingBytes };
      return this.limits;
    });
  }
}

export class Publisher extends Stream {
  /** @param {Dialed} d */
  constructor(d) {
    super(d);
    this.maxMessages = d.open.maxUnconfirmedMessages || 1000;
    this.maxBytes = d.open.maxUnconfirmedBytes || 16 << 20;
    /** Messages and bytes sent and not yet answered. */
    this.unconfirmed = 0;
    this.unconfirmedBytes = 0;
    /** @type {{frame: Record<string, any>, n: number, size: number, resolve: (v: any) => void, reject: (e: any) => void}[]} */
    this.waiting = [];
    this.start(d);
  }

  onEnd() {
    for (const w of this.waiting.splice(0)) w.reject(this.error);
  }

  /** @param {Record<string, any>} frame @param {number} n */
  enqueue(frame, n) {
    const size = JSON.stringify(frame).length + 16;
    return new Promise((resolve, reject) => {
      this.waiting.push({ frame, n, size, resolve, reject });
      this.pump();
    });
  }

  /** Sends what fits under the server's limits, in order. */
  pump() {
    while (this.waiting.length) {
      const w = this.waiting[0];
      const fits = this.unconfirmed === 0 || (this.unconfirmed + w.n <= this.maxMessages && this.unconfirmedBytes + w.size <= this.maxBytes);
      if (!fits) return;
      this.waiting.shift();
      this.unconfirmed += w.n;
      this.unconfirmedBytes += w.size;
      const done = () => {
        this.unconfirmed -= w.n;
        this.unconfirmedBytes -= w.size;
        this.pump();
      };
      this.send(w.frame, (f) => f.results).then(
        (r) => {
          done();
          w.resolve(r);
        },
        (e) => {
          done();
          w.reject(e);
        },
      );
    }
  }

  /**
   * Publishes one message; resolves to its confirm's result once durable
   * (ProblemError for a bad message, StreamClosed if the stream ends first).
   * @param {Record<string, any>} message
   */
  async publish(message) {
    const rs = await this.enqueue({ type: "publish", message }, 1);
    return rs[0];
  }

  /** Publishes an atomic batch; resolves to one result per message. @param {Record<string, any>[]} messages */
  publishBatch(messages) {
    return this.enqueue({ type: "publish", messages }, messages.length);
  }
}

/**
 * Opens a consume stream on group.
 * @param {string} baseUrl @param {string} group
 * @param {{key?: string, consumerId?: string, invisibleSeconds?: number, maxOutstandingMessages?: number, maxOutstandingBytes?: number, timeoutMs?: number, gatherAcks?: boolean}} [o]
 */
export async function consume(baseUrl, group, o = {}) {
  const { key, timeoutMs = 10000, gatherAcks = true, ...q } = o;
  const d = await dial(wsUrl(baseUrl, `/v1/groups/${encodeURIComponent(group)}/stream`, q), key, timeoutMs);
  return new Consumer(d, group, gatherAcks);
}

/**
 * Opens a publish stream on topic.
 * @param {string} baseUrl @param {string} topic
 * @param {{key?: string, maxUnconfirmedMessages?: number, maxUnconfirmedBytes?: number, timeoutMs?: number}} [o]
 */
export async function publishStream(baseUrl, topic, o = {}) {
  const { key, timeoutMs = 10000, ...q } = o;
  const d = await dial(wsUrl(baseUrl, `/v1/topics/${encodeURIComponent(topic)}/stream`, q), key, timeoutMs);
  return new Publisher(d);
}
