// Browser test of the console against two JetStream gateways: starts a
// real nats-server (JetStream, one node, 127.0.0.1) and two mqgate
// processes with --backend jetstream sharing a handle key, blocks an
// ORDERLY key through gateway A, then drives Chromium on gateway B's
// console: the blocked-keys page lists the key with its reason and the
// oldest keys (per-key lag), Skip sends the head to the DLQ (checked
// through A), and the skipped message's timeline shows its steps.
// Screenshots under build/console-screenshots/jetstream-*.png.
//
// Env: MQGATE_BIN (default bin/mqgate-console), NATS_BIN (default
// bin/nats-server), CHROMIUM (default /usr/bin/chromium), SHOTS.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const BIN = process.env.MQGATE_BIN || path.join(root, "bin/mqgate-console");
const NATS = process.env.NATS_BIN || path.join(root, "bin/nats-server");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SHOTS = process.env.SHOTS || path.join(root, "build/console-screenshots");
const KEY = "console-admin-key";

function fail(msg) { throw new Error(msg); }

async function until(what, fn, ms = 15000) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try { const v = await fn(); if (v) return v; } catch (e) { last = e; }
    if (Date.now() > end) fail(`timed out waiting for ${what}${last ? ": " + last.message : ""}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// freePort asks the kernel for a loopback port nats-server can take.
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

// proc starts a process and resolves when a stderr line satisfies ready
// (its value is what ready returned).
function proc(bin, args, ready, name) {
  const p = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
  const lines = readline.createInterface({ input: p.stderr });
  const races = [];
  const up = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready in 30 s`)), 30000);
    lines.on("line", (l) => {
      if (l.includes("WARNING: DATA RACE")) races.push(l);
      const v = ready(l);
      if (v) { clearTimeout(timer); resolve(v); }
    });
    p.on("exit", (code) => reject(new Error(`${name} exited: ${code}`)));
  });
  return { proc: p, up, races };
}

function listening(l) {
  try { const r = JSON.parse(l); return r.message === "listening" && r.addr ? r.addr : null; } catch { return null; }
}

async function main() {
  mkdirSync(SHOTS, { recursive: true });
  const dir = mkdtempSync(path.join(tmpdir(), "mqgate-console-js-"));
  const port = await freePort();
  const procs = [];
  let browser, page;
  try {
    const nats = proc(NATS, ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", path.join(dir, "nats")],
      (l) => l.includes("Server is ready"), "nats-server");
    procs.push(nats);
    await nats.up;
    const keys = path.join(dir, "keys.json");
    writeFileSync(keys, JSON.stringify({ keys: [{ name: "ops", key: KEY, grants: ["admin"] }] }));
    const handle = path.join(dir, "handle.key");
    writeFileSync(handle, randomBytes(32));
    const gws = [];
    for (const name of ["a", "b"]) {
      const g = proc(BIN, ["serve", "--backend", "jetstream", "--addr", "127.0.0.1:0", "--nats-url", `nats://127.0.0.1:${port}`,
        "--nats-replicas", "1", "--handle-key-file", handle, "--api-keys", keys, "--log-format", "json"], listening, "mqgate " + name);
      procs.push(g);
      gws.push("http://" + (await g.up));
    }
    const [A, B] = gws;
    const api = async (base, method, p, body, want) => {
      const r = await fetch(base + "/v1" + p, { method, headers: { Authorization: "Bearer " + KEY, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await r.text();
      if (want && r.status !== want) fail(`${method} ${p}: ${r.status} ${text}`);
      return text ? JSON.parse(text) : null;
    };

    // ---- data, through A: ledger-seq's head (debit 1, acct-7) is nacked.
    await api(A, "PUT", "/topics/ledger", { queues: 1 }, 201);
    await api(A, "PUT", "/groups/ledger-seq", { subscriptions: [{ topic: "ledger" }], consumeMode: "ORDERLY", consumeFrom: { position: "FIRST_OFFSET" } }, 201);
    for (const [b, k] of [["debit 1", "acct-7"], ["credit 1", "acct-3"], ["debit 2", "acct-7"]]) {
      await api(A, "POST", "/topics/ledger/messages", { body: b, shardingKey: k }, 201);
    }
    const head = await until("the ledger head", async () => (await api(A, "POST", "/groups/ledger-seq/receive", { waitSeconds: 1 }, 200)).messages[0]);
    if (head.body !== "debit 1") fail("ledger head is " + head.body);
    await api(A, "POST", "/groups/ledger-seq/nack", { receiptHandles: [head.receiptHandle], delayLevel: 5, reason: "ledger locked" }, 200);
    await until("acct-7 blocked, seen through B", async () => (await api(B, "GET", "/groups/ledger-seq/blocked", undefined, 200)).blocked.length === 1);

    // ---- browser, on B
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    page = await browser.newPage({ viewport: { width: 1366, height: 850 } });
    page.on("dialog", (d) => d.accept());
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const shot = (name) => page.screenshot({ path: path.join(SHOTS, "jetstream-" + name + ".png"), fullPage: true });
    await page.goto(B + "/console");
    await page.getByRole("heading", { name: "API key needed" }).waitFor();
    await page.getByLabel("API key").fill(KEY);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "ledger" }).waitFor();

    // Blocked keys and the oldest keys (per-key lag) of ledger-seq.
    await page.goto(B + "/console#/blocked/ledger-seq");
    const skip = page.getByRole("button", { name: /^Skip .* of key acct-7$/ });
    await skip.waitFor();
    await page.getByRole("cell", { name: "ledger locked" }).waitFor();
    await page.getByRole("heading", { name: "Oldest keys" }).waitFor();
    for (const k of ["acct-7", "acct-3"]) {
      if (!(await page.locator("table").last().getByRole("cell", { name: k, exact: true }).count())) fail("the oldest keys do not list " + k);
    }
    await shot("01-blocked");
    await skip.focus();
    await page.keyboard.press("Enter");
    await page.getByText("acct-7: SKIPPED").waitFor();
    await until("debit 1 in ledger-seq's DLQ, through A", async () =>
      (await api(A, "GET", "/groups/ledger-seq/dlq", undefined, 200)).messages.some((m) => m.body === "debit 1" && m.lastReason === "skipped by operator; last: ledger locked"));
    const next = await until("the queue to continue", async () => (await api(A, "POST", "/groups/ledger-seq/receive", { waitSeconds: 1 }, 200)).messages[0]);
    if (next.body !== "credit 1") fail("after the skip the queue gave " + next.body);
    await page.reload();
    await page.getByText("Nothing here.").first().waitFor();
    await shot("02-blocked-after-skip");

    // The skipped message's timeline, recorded by A and B, read on B.
    await page.goto(B + `/console#/timeline/ledger-seq/${encodeURIComponent(head.messageId)}`);
    await page.locator("ol.timeline li.SKIPPED").waitFor();
    for (const t of ["PUBLISHED", "DELIVERED", "NACKED", "SKIPPED", "DEAD_LETTERED"]) {
      if (!(await page.locator(`ol.timeline li.${t}`).count())) fail("timeline lacks " + t);
    }
    await shot("03-timeline");

    if (errors.length) fail("page errors: " + errors.join("; "));
    console.log(`console browser test on JetStream: ok (screenshots in ${SHOTS})`);
  } catch (e) {
    if (page) await page.screenshot({ path: path.join(SHOTS, "jetstream-failure.png"), fullPage: true }).catch(() => {});
    throw e;
  } finally {
    if (browser) await browser.close();
    for (const p of procs.reverse()) {
      p.proc.kill("SIGTERM");
      await new Promise((r) => (p.proc.exitCode !== null ? r() : p.proc.on("exit", r)));
    }
    if (procs.some((p) => p.races.length)) { console.error("a server reported a data race"); process.exitCode = 1; }
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error("console browser test on JetStream FAILED:", e.message); process.exit(1); });
