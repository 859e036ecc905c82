// Browser test of the built-in console: starts the real mqgate binary on
// 127.0.0.1:0 with API keys, seeds topics, groups, a blocked ORDERLY key,
// dead letters and a failing webhook through /v1, then drives Debian's
// Chromium (playwright-core) through every page: it enters the key when
// the page asks, skips the blocked key and redrives the DLQ through the
// UI, checks the results through /v1, walks the nav with the keyboard and
// saves a screenshot per page under build/console-screenshots/.
//
// Env: MQGATE_BIN (default bin/mqgate-console), CHROMIUM (default
// /usr/bin/chromium), SHOTS (default build/console-screenshots).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

// Node 18 (Debian bookworm) has no import.meta.dirname.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const BIN = process.env.MQGATE_BIN || path.join(root, "bin/mqgate-console");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SHOTS = process.env.SHOTS || path.join(root, "build/console-screenshots");
const KEY = "console-admin-key";
const DEADLINE_MS = 15000;

function fail(msg) { throw new Error(msg); }

// until polls fn (async, truthy = done) with a deadline; no fixed sleeps.
async function until(what, fn, ms = DEADLINE_MS) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try { const v = await fn(); if (v) return v; } catch (e) { last = e; }
    if (Date.now() > end) fail(`timed out waiting for ${what}${last ? ": " + last.message : ""}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function startServer(dir) {
  const keys = path.join(dir, "keys.json");
  writeFileSync(keys, JSON.stringify({ keys: [{ name: "ops", key: KEY, grants: ["admin"] }] }));
  const p = spawn(BIN, ["serve", "--addr", "127.0.0.1:0", "--data", path.join(dir, "data"), "--log-format", "json",
    "--api-keys", keys, "--webhook-allow-loopback"], { stdio: ["ignore", "ignore", "pipe"] });
  const lines = readline.createInterface({ input: p.stderr });
  const races = [];
  lines.on("line", (l) => { if (l.includes("WARNING: DATA RACE")) races.push(l); });
  const addr = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("mqgate did not log its address in 30 s")), 30000);
    lines.on("line", (l) => {
      try { const r = JSON.parse(l); if (r.message === "listening" && r.addr) { clearTimeout(timer); resolve(r.addr); } } catch { /* not JSON */ }
    });
    p.on("exit", (code) => reject(new Error("mqgate exited: " + code)));
  });
  return { proc: p, addr, races };
}

async function main() {
  mkdirSync(SHOTS, { recursive: true });
  const dir = mkdtempSync(path.join(tmpdir(), "mqgate-console-"));
  // A webhook receiver that fails (503) until hookStatus changes: the
  // groups page shows it failing, then recovered.
  let hookStatus = 503;
  const hook = http.createServer((req, res) => { req.resume(); res.writeHead(hookStatus).end(); });
  await new Promise((r) => hook.listen(0, "127.0.0.1", r));
  const srv = startServer(dir);
  let browser, page;
  try {
    const base = "http://" + (await srv.addr);
    const api = async (method, p, body, want) => {
      const r = await fetch(base + "/v1" + p, { method, headers: { Authorization: "Bearer " + KEY, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await r.text();
      if (want && r.status !== want) fail(`${method} ${p}: ${r.status} ${text}`);
      return text ? JSON.parse(text) : null;
    };
    // ---- data
    await api("PUT", "/topics/orders", { queues: 4 }, 201);
    await api("PUT", "/topics/ledger", { queues: 1 }, 201);
    await api("PUT", "/groups/billing", { subscriptions: [{ topic: "orders" }], consumeFrom: { position: "FIRST_OFFSET" } }, 201);
    await api("PUT", "/groups/ledger-seq", { subscriptions: [{ topic: "ledger" }], consumeMode: "ORDERLY", consumeFrom: { position: "FIRST_OFFSET" } }, 201);
    await api("PUT", "/groups/notify", { subscriptions: [{ topic: "orders" }], consumeFrom: { position: "FIRST_OFFSET" },
      push: { url: `http://127.0.0.1:${hook.address().port}/hook`, timeoutSeconds: 2 } }, 201);
    const msgs = Array.from({ length: 24 }, (_, i) => ({ body: `order ${i}`, tags: i % 2 ? "paid" : "created", shardingKey: `customer-${i % 5}` }));
    await api("POST", "/topics/orders/messages/batch", { messages: msgs }, 201);
    for (const [b, k] of [["debit 1", "acct-7"], ["credit 1", "acct-3"], ["debit 2", "acct-7"]]) {
      await api("POST", "/topics/ledger/messages", { body: b, shardingKey: k }, 201);
    }
    // Three dead letters in billing (nack -1), the rest acked.
    let dead = 0, acked = 0;
    await until("billing to consume everything", async () => {
      const r = await api("POST", "/groups/billing/receive", { maxMessages: 8, waitSeconds: 1 }, 200);
      for (const m of r.messages) {
        const verb = dead < 3 ? "nack" : "ack";
        await api("POST", `/groups/billing/${verb}`, verb === "nack" ? { receiptHandles: [m.receiptHandle], delayLevel: -1 } : { receiptHandles: [m.receiptHandle] }, 200);
        if (verb === "nack") dead++; else acked++;
      }
      return dead + acked === 24;
    });
    await until("three dead letters", async () => (await api("GET", "/groups/billing/dlq", undefined, 200)).messages.length === 3);
    // ledger-seq: the head (debit 1, acct-7) fails: the queue is blocked.
    const head = await until("the ledger head", async () => (await api("POST", "/groups/ledger-seq/receive", { waitSeconds: 1 }, 200)).messages[0]);
    if (head.body !== "debit 1") fail("ledger head is " + head.body);
    await api("POST", "/groups/ledger-seq/nack", { receiptHandles: [head.receiptHandle] }, 200);
    await until("acct-7 blocked", async () => (await api("GET", "/groups/ledger-seq/blocked", undefined, 200)).blocked.length === 1);
    // ledger-bc (BROADCASTING ORDERLY): consumer c1's head fails; keys block per consumer.
    await api("PUT", "/groups/ledger-bc", { subscriptions: [{ topic: "ledger" }], messageModel: "BROADCASTING", consumeMode: "ORDERLY", consumeFrom: { position: "FIRST_OFFSET" } }, 201);
    const bcHead = await until("c1's ledger head", async () => (await api("POST", "/groups/ledger-bc/receive", { waitSeconds: 1, consumerId: "c1" }, 200)).messages[0]);
    if (bcHead.body !== "debit 1") fail("c1's ledger head is " + bcHead.body);
    await api("POST", "/groups/ledger-bc/nack", { receiptHandles: [bcHead.receiptHandle] }, 200);
    await until("acct-7 blocked for c1", async () => (await api("GET", "/groups/ledger-bc/blocked?consumerId=c1", undefined, 200)).blocked.length === 1);
    await until("the webhook to fail", async () => ((await api("GET", "/groups/notify", undefined, 200)).status.push || {}).failed > 0);

    // ---- browser
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    page = await browser.newPage({ viewport: { width: 1366, height: 850 } });
    page.on("dialog", (d) => d.accept());
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const shot = (name) => page.screenshot({ path: path.join(SHOTS, name + ".png"), fullPage: true });

    // Key prompt: /v1 answers 401 without a key.
    await page.goto(base + "/console");
    await page.getByRole("heading", { name: "API key needed" }).waitFor();
    await shot("00-api-key");
    await page.getByLabel("API key").fill(KEY);
    await page.keyboard.press("Enter");

    // Topics: per-queue depth.
    await page.getByRole("heading", { name: "orders" }).waitFor();
    await page.locator("[data-page=topics] table").first().waitFor();
    await shot("01-topics");

    // Keyboard: Tab from the top reaches the skip link, then the nav links.
    await page.locator("body").focus();
    await page.keyboard.press("Tab");
    if ((await page.evaluate(() => document.activeElement.textContent)) !== "Skip to content") fail("first Tab stop is not the skip link");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    if ((await page.evaluate(() => document.activeElement.textContent)) !== "Groups") fail("Tab order: expected the Groups link");
    await page.keyboard.press("Enter");

    // Groups: lag chart, status, webhook failing.
    await page.getByRole("heading", { name: "notify" }).waitFor();
    await page.locator("svg.chart").first().waitFor();
    await until("the webhook state on the page", async () => (await page.getByText(/failing \(\d+ in a row\)/).count()) > 0);
    // The badge says the latest outcome: red beside the current error.
    const pushState = page.locator("#group-notify ~ dl [data-push-state]");
    if ((await pushState.getAttribute("data-push-state")) !== "failing" || !(await pushState.locator(".badge.bad").count())) {
      fail("a failing webhook's badge is not red: " + (await pushState.innerText()));
    }
    await shot("02-groups");

    // Charts: billing's rates (msg/s) and lag (messages) with axes and a
    // legend; messages published while the page samples show as a rate
    // above zero once two samples are in (one every 5 s).
    const rateChart = page.getByRole("img", { name: /^Rates of billing in msg\/s/ });
    const lagChart = page.getByRole("img", { name: /^Lag of billing in messages/ });
    await rateChart.waitFor();
    await lagChart.waitFor();
    for (const c of [rateChart, lagChart]) {
      const texts = await c.locator("text").allTextContents();
      if (!texts.includes("now") || !texts.includes("−5 min") || !texts.includes("time") || !texts.includes("0")) fail("chart axes lack their labels: " + texts.join("|"));
      if ((await c.locator(".y-axis line.grid").count()) < 2) fail("chart has no y grid");
    }
    if (!(await rateChart.locator("text").allTextContents()).includes("msg/s")) fail("rates chart has no unit");
    if (!(await lagChart.locator("text").allTextContents()).includes("messages")) fail("lag chart has no unit");
    for (const legend of ["arrived", "consumed"]) if (!(await rateChart.locator("text.legend").allTextContents()).includes(legend)) fail("rates legend lacks " + legend);
    await api("POST", "/topics/orders/messages/batch", { messages: Array.from({ length: 40 }, (_, i) => ({ body: "chart " + i })) }, 201);
    await until("billing's arrival rate above zero", async () => {
      const label = await rateChart.getAttribute("aria-label");
      const m = /now arrived ([\d.]+k?)/.exec(label || "");
      return m && parseFloat(m[1]) > 0;
    }, 20000);
    await until("billing's lag chart to rise", async () => /now lag [1-9]/.test((await lagChart.getAttribute("aria-label")) || ""), 20000);
    await page.locator("section.card", { has: page.getByRole("heading", { name: "billing" }) }).screenshot({ path: path.join(SHOTS, "02c-group-charts.png") });
    await shot("02a-groups-rates");

    // Pause billing and resume it, from the keyboard.
    const pause = page.getByRole("button", { name: "Pause group billing" });
    await pause.focus();
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Resume group billing" }).waitFor();
    if (!(await api("GET", "/groups/billing", undefined, 200)).paused) fail("Pause did not pause billing");
    await page.getByText(/^paused since /).first().waitFor();
    await shot("02b-group-paused");
    await page.getByRole("button", { name: "Resume group billing" }).click();
    await page.getByRole("button", { name: "Pause group billing" }).waitFor();
    if ((await api("GET", "/groups/billing", undefined, 200)).paused) fail("Resume did not resume billing");

    // Blocked keys: skip acct-7's head through the UI.
    await page.goto(base + "/console#/blocked/ledger-seq");
    const skip = page.getByRole("button", { name: /^Skip .* of key acct-7$/ });
    await skip.waitFor();
    await shot("03-blocked");
    await skip.focus();
    await page.keyboard.press("Enter");
    await until("debit 1 in ledger-seq's DLQ", async () => (await api("GET", "/groups/ledger-seq/dlq", undefined, 200)).messages.some((m) => m.body === "debit 1"));
    const next = await until("the queue to continue", async () => (await api("POST", "/groups/ledger-seq/receive", { waitSeconds: 1 }, 200)).messages[0]);
    if (next.body !== "credit 1") fail("after the skip the queue gave " + next.body);
    await page.reload();
    await page.getByText("Nothing here.").first().waitFor();
    await shot("04-blocked-after-skip");

    // Blocked keys of a BROADCASTING group: the page asks for the consumer id;
    // only Skip is offered (it drops the head for that consumer).
    await page.goto(base + "/console#/blocked/ledger-bc");
    const cid = page.getByLabel("Consumer id");
    await cid.waitFor();
    await cid.focus();
    await page.keyboard.type("c1");
    await page.keyboard.press("Enter");
    const bcSkip = page.getByRole("button", { name: /^Skip .* of key acct-7$/ });
    await bcSkip.waitFor();
    if (await page.getByRole("button", { name: /^Park key/ }).count() !== 0) fail("Park is offered for a BROADCASTING group");
    await shot("04b-blocked-broadcast");
    await bcSkip.focus();
    await page.keyboard.press("Enter");
    // The press returns before the page's request is answered: receiving
    // before that could be handed the head the skip is about to drop.
    await page.getByText("acct-7: SKIPPED").waitFor();
    const bcNext = await until("c1's queue to continue", async () => (await api("POST", "/groups/ledger-bc/receive", { waitSeconds: 1, consumerId: "c1" }, 200)).messages[0]);
    if (bcNext.body !== "credit 1") fail("after the skip c1's queue gave " + bcNext.body);

    // Dead letters: redrive all through the UI.
    await page.goto(base + "/console#/dlq/billing");
    const redrive = page.getByRole("button", { name: "Redrive all" });
    await redrive.waitFor();
    // The timeline below shows one redriven by "Redrive all" (a filter
    // job's redrives are not in timelines yet).
    const dl = (await api("GET", "/groups/billing/dlq", undefined, 200)).messages;
    const firstID = (dl.find((m) => m.tags !== "paid") || dl[0]).messageId;
    const wantRedriven = dl.some((m) => m.tags !== "paid");
    await shot("05-dlq");
    // Filter: count the "paid" ones with a dry run, then redrive them (a job).
    const paid = (await api("GET", "/groups/billing/dlq", undefined, 200)).messages.filter((m) => m.tags === "paid").length;
    await page.getByLabel("Tags").fill("paid");
    await page.getByRole("button", { name: "Count (dry run)" }).click();
    await page.getByText(paid === 1 ? "1 dead letter matches." : `${paid} dead letters match.`).waitFor();
    await shot("05b-dlq-dry-run");
    const paidID = (dl.find((m) => m.tags === "paid") || {}).messageId;
    await page.getByRole("button", { name: "Redrive matching" }).click();
    await page.getByText(new RegExp(`Redriven: ${paid}`)).waitFor();
    await until("the paid ones to leave the DLQ", async () => (await api("GET", "/groups/billing/dlq", undefined, 200)).messages.length === 3 - paid);
    // The rest: redrive all (disabled when nothing is left).
    if (paid < 3) {
      await page.getByRole("button", { name: "Redrive all" }).waitFor();
      await page.getByRole("button", { name: "Redrive all" }).click();
      await page.getByText(new RegExp(`Redriven: ${3 - paid}`)).waitFor();
    }
    await until("billing's DLQ to empty", async () => (await api("GET", "/groups/billing/dlq", undefined, 200)).messages.length === 0);
    await shot("06-dlq-after-redrive");

    // Timeline of a redriven message.
    await page.goto(base + `/console#/timeline/billing/${encodeURIComponent(firstID)}`);
    await page.locator("ol.timeline li.DEAD_LETTERED").waitFor();
    for (const t of ["PUBLISHED", "DELIVERED", "NACKED", "DEAD_LETTERED", ...(wantRedriven ? ["REDRIVEN"] : [])]) {
      if (!(await page.locator(`ol.timeline li.${t}`).count())) fail("timeline lacks " + t);
    }
    await shot("07-timeline");

    // A message redriven by a filter job: its REDRIVEN event names the job
    // (the jobId the API returns).
    if (paidID) {
      const events = (await api("GET", `/groups/billing/messages/${encodeURIComponent(paidID)}/timeline`, undefined, 200)).events;
      const jobID = (events.find((e) => e.type === "REDRIVEN" && e.jobId) || {}).jobId;
      if (!jobID) fail("the API's timeline of a job-redriven message has no REDRIVEN jobId: " + JSON.stringify(events));
      await page.goto(base + `/console#/timeline/billing/${encodeURIComponent(paidID)}`);
      await page.locator("ol.timeline li.REDRIVEN").first().waitFor();
      const shown = await page.locator("ol.timeline li.REDRIVEN code.job").first().innerText();
      if (shown !== jobID) fail(`REDRIVEN shows job ${shown}, the redrive job was ${jobID}`);
      await shot("07b-timeline-job");
    } else if (paid > 0) {
      fail("no paid dead letter to check the REDRIVEN event with");
    }

    // Plurals: the ledger topic has 1 queue.
    await page.goto(base + "/console#/topics");
    await page.getByRole("heading", { name: "ledger" }).waitFor();
    const topicsText = await page.locator("#main").innerText();
    if (/\b1 queues\b|\b1 messages\b|\b1 hours\b/.test(topicsText)) fail("a plural after 1 on the topics page: " + topicsText);
    if (!/\b1 queue\b/.test(topicsText)) fail("the 1-queue topic does not say \"1 queue\"");

    // The webhook recovers: the badge turns green and the old error is no
    // longer shown as current (red).
    hookStatus = 200;
    await until("the webhook to deliver", async () => {
      const p = (await api("GET", "/groups/notify", undefined, 200)).status.push || {};
      return p.delivered > 0 && p.consecutiveFailures === 0;
    }, 60000);
    await page.goto(base + "/console#/groups");
    await until("the recovered webhook on the page", async () => {
      await page.reload();
      await page.locator("#group-notify").waitFor();
      return (await page.locator("#group-notify ~ dl [data-push-state]").getAttribute("data-push-state")) === "healthy";
    }, 30000);
    const recovered = page.locator("#group-notify ~ dl [data-push-state]");
    if (await recovered.locator(".error").count()) fail("a healthy badge beside a red error: " + (await recovered.innerText()));
    await shot("02c-webhook-recovered");

    // /docs: every section heading has its description, and no "null".
    await page.goto(base + "/docs");
    await page.locator("main h2").first().waitFor();
    const sections = await page.locator("main h2").evaluateAll((hs) => hs.map((h) => [h.textContent, h.nextElementSibling ? h.nextElementSibling.tagName + ":" + h.nextElementSibling.textContent : ""]));
    if (sections.length < 5) fail("/docs shows " + sections.length + " sections");
    for (const [h, next] of sections) {
      if (!next.startsWith("P:") || next.length < 10) fail(`/docs section ${h} has no description (next: ${next.slice(0, 60)})`);
    }
    const docsText = await page.locator("body").innerText();
    if (/(^|\n)\s*null\s*(\n|$)/.test(docsText) || docsText.includes("null<")) fail("/docs shows a literal null");
    for (const p of ["/metrics", "/console"]) if (!docsText.includes(p)) fail("/docs does not describe " + p);
    await shot("08-docs");

    // Live tail (tail.js): billing over its consume stream in the browser,
    // the key in the mqgate.key subprotocol; what it shows is acked.
    await page.goto(base + "/console#/tail/billing");
    await page.getByRole("button", { name: "Start tail" }).click();
    await page.getByText(/^live · /).waitFor();
    for (const b of ["tail 1", "tail 2", "tail 3"]) await api("POST", "/topics/orders/messages", { body: b, tags: "tail" }, 201);
    for (const b of ["tail 1", "tail 2", "tail 3"]) await page.getByRole("cell", { name: b, exact: true }).waitFor();
    await shot("09-tail");
    await until("the tailed messages acked", async () =>
      (await api("GET", "/groups/billing/offsets", undefined, 200)).offsets.every((o) => o.lag === 0 && !o.inFlight));
    await page.getByRole("button", { name: "Stop" }).click();
    await page.getByText(/^closed \(1000/).waitFor();

    if (errors.length) fail("page errors: " + errors.join("; "));
    console.log(`console browser test: ok (screenshots in ${SHOTS})`);
  } catch (e) {
    if (page) await page.screenshot({ path: path.join(SHOTS, "failure.png"), fullPage: true }).catch(() => {});
    throw e;
  } finally {
    if (browser) await browser.close();
    srv.proc.kill("SIGTERM");
    await new Promise((r) => (srv.proc.exitCode !== null ? r() : srv.proc.on("exit", r)));
    hook.close();
    if (srv.races.length) { console.error("the server reported a data race"); process.exitCode = 1; }
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error("console browser test FAILED:", e.message); process.exit(1); });
