// mqgate console: a small hash-routed page over the /v1 API. Every value
// from the server goes in through textContent (el), never as HTML.
"use strict";

const KEY = "mqgate-api-key";
const main = () => document.getElementById("main");

// el builds an element: el("td", {class: "num"}, "12", otherNode).
function el(tag, attrs, ...kids) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else n.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === undefined || kid === null) continue;
    n.append(kid instanceof Node ? kid : String(kid));
  }
  return n;
}

function say(text) {
  const s = document.getElementById("status");
  s.textContent = text;
  clearTimeout(say.t);
  say.t = setTimeout(() => { s.textContent = ""; }, 5000);
}

class NeedKey extends Error {}

// api calls /v1 with the stored key; a 401 asks for one.
async function api(method, path, body) {
  const headers = { "Accept": "application/json" };
  const key = sessionStorage.getItem(KEY);
  if (key) headers["Authorization"] = "Bearer " + key;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch("/v1" + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status === 401) throw new NeedKey();
  const text = await r.text();
  const data = text ? JSON.parse(text) : null;
  if (!r.ok) {
    const msg = data && (data.detail || data.title) || r.statusText;
    const err = new Error(r.status + " " + msg);
    err.status = r.status;
    throw err;
  }
  return data;
}

const enc = encodeURIComponent;
const fmtTime = (s) => s ? new Date(s).toLocaleString() : "";

// plural is "1 queue", "4 queues".
const plural = (n, noun) => `${n} ${noun}${n === 1 ? "" : "s"}`;

// pushState is a push group's webhook state from its latest outcome: failing
// while the last request failed (even before a second failure counts "in a
// row"), healthy after a 2xx that came later than any error, idle before
// the first request. A healthy badge never sits beside a current error.
function pushState(p) {
  const lastErr = p.lastErrorAt ? Date.parse(p.lastErrorAt) : 0;
  const lastOk = p.lastSuccessAt ? Date.parse(p.lastSuccessAt) : 0;
  if (p.consecutiveFailures > 0 || (p.lastError && lastErr >= lastOk)) {
    const n = p.consecutiveFailures;
    return { name: "failing", badge: "bad", text: n > 0 ? `failing (${n} in a row)` : "failing" };
  }
  if (lastOk) return { name: "healthy", badge: "ok", text: "healthy" };
  return { name: "idle", badge: "warn", text: "no deliveries yet" };
}

function table(headers, rows, caption) {
  return el("table", {},
    caption ? el("caption", { class: "muted" }, caption) : null,
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col", class: h.num ? "num" : null }, h.label || h)))),
    el("tbody", {}, rows.length ? rows : el("tr", {}, el("td", { colspan: headers.length, class: "muted" }, "Nothing here."))));
}

function keyForm(retry) {
  const input = el("input", { id: "api-key", type: "password", autocomplete: "off", required: true });
  const form = el("form", { class: "keyform", onsubmit: (e) => {
    e.preventDefault();
    sessionStorage.setItem(KEY, input.value.trim());
    document.getElementById("forget-key").hidden = false;
    retry();
  } },
  el("h2", {}, "API key needed"),
  el("p", {}, "This server requires an API key. It is kept in this tab only and sent as a Bearer token."),
  el("label", { for: "api-key" }, "API key", input),
  el("button", { type: "submit", class: "primary" }, "Use key"));
  main().replaceChildren(form);
  input.focus();
}

// groupPicker renders a group <select> that navigates to route/{group}.
async function groupPicker(route, current, onlyOrderly) {
  const { groups } = await api("GET", "/groups");
  const list = groups.filter((g) => !onlyOrderly || g.consumeMode === "ORDERLY");
  const sel = el("select", { id: "group-pick" },
    el("option", { value: "" }, "— choose a group —"),
    list.map((g) => el("option", { value: g.name, selected: g.name === current }, g.name)));
  const form = el("form", { class: "row", onsubmit: (e) => { e.preventDefault(); if (sel.value) location.hash = "#/" + route + "/" + enc(sel.value); } },
    el("label", { for: "group-pick" }, "Group", sel), el("button", { type: "submit" }, "Show"));
  return form;
}

// ---- Topics -------------------------------------------------------------

async function pageTopics() {
  const { topics } = await api("GET", "/topics");
  const details = await Promise.all(topics.map((t) => api("GET", "/topics/" + enc(t.name))));
  const out = [el("h2", {}, "Topics")];
  if (!details.length) out.push(el("p", { class: "muted" }, "No topics yet."));
  for (const t of details) {
    const qs = (t.stats && t.stats.queues) || [];
    out.push(el("section", { class: "card", "aria-labelledby": "topic-" + t.name },
      el("h3", { id: "topic-" + t.name }, t.name),
      el("p", { class: "muted" }, `${plural(t.queues, "queue")} · ${plural(t.stats ? t.stats.messages : 0, "message")} stored · retention ${plural(t.retentionHours, "hour")}`),
      table(["Queue", { label: "Min offset", num: true }, { label: "Max offset", num: true }, { label: "Depth", num: true }],
        qs.map((q) => el("tr", {}, el("td", {}, q.queueId), el("td", { class: "num" }, q.minOffset),
          el("td", { class: "num" }, q.maxOffset), el("td", { class: "num" }, q.maxOffset - q.minOffset))))));
  }
  return out;
}

// ---- Groups -------------------------------------------------------------

// lagHistory keeps the last samples of each group's offsets while the
// page is open (the server keeps no history): lag, and the sums of the
// queues' max and committed offsets, whose changes are the rates.
const lagHistory = new Map();
const SAMPLE_MS = 5000;
const WINDOW_MS = 5 * 60 * 1000;

function sampleLag(group, offsets) {
  const h = lagHistory.get(group) || [];
  const sum = (f) => offsets.reduce((a, o) => a + o[f], 0);
  h.push({ t: Date.now(), lag: sum("lag"), arrived: sum("maxOffset"), committed: sum("committedOffset") });
  while (h.length && h[0].t < Date.now() - WINDOW_MS) h.shift();
  lagHistory.set(group, h);
  return h;
}

// rates turns consecutive samples into messages per second; a counter
// that went back (offsets reset, a topic recreated) gives no point.
function rates(h, field) {
  const out = [];
  for (let i = 1; i < h.length; i++) {
    const dt = (h[i].t - h[i - 1].t) / 1000, dv = h[i][field] - h[i - 1][field];
    if (dt > 0.2 && dv >= 0) out.push({ t: h[i].t, v: dv / dt });
  }
  return out;
}

// groupCharts are a group's rates and lag over the last minutes.
function groupCharts(name, h) {
  const now = Date.now();
  return el("div", { class: "charts" },
    timeChart({ title: "Rates of " + name, unit: "msg/s", windowMs: WINDOW_MS, now,
      series: [{ name: "arrived", cls: "s0", points: rates(h, "arrived") }, { name: "consumed", cls: "s1", points: rates(h, "committed") }] }),
    timeChart({ title: "Lag of " + name, unit: "messages", windowMs: WINDOW_MS, now,
      series: [{ name: "lag", cls: "s2", points: h.map((s) => ({ t: s.t, v: s.lag })) }] }));
}

async function groupCard(g) {
  const [detail, offs] = await Promise.all([api("GET", "/groups/" + enc(g.name)),
    g.messageModel === "BROADCASTING" ? { offsets: [] } : api("GET", "/groups/" + enc(g.name) + "/offsets")]);
  const lag = offs.offsets.reduce((a, o) => a + o.lag, 0);
  const h = sampleLag(g.name, offs.offsets);
  const st = detail.status || {};
  const dl = el("dl", {},
    el("dt", {}, "Mode"), el("dd", {}, `${g.messageModel} · ${g.consumeMode}`),
    el("dt", {}, "Lag"), el("dd", {}, lag),
    el("dt", {}, "In flight"), el("dd", {}, st.inFlight ?? 0),
    el("dt", {}, "Retry / DLQ"), el("dd", {}, `${st.retryDepth ?? 0} / ${st.dlqDepth ?? 0}`));
  dl.append(el("dt", {}, "Consumption"), el("dd", {},
    el("span", { class: "badge " + (detail.paused ? "warn" : "ok") }, detail.paused ? "paused since " + fmtTime(detail.pausedAt) : "running"), " ",
    el("button", { type: "button", class: detail.paused ? "primary" : "", "aria-label": (detail.paused ? "Resume group " : "Pause group ") + g.name,
      onclick: async () => {
        const r = await api("POST", `/groups/${enc(g.name)}/${detail.paused ? "resume" : "pause"}`);
        say(`${g.name}: ${r.paused ? "paused" : "resumed"}`);
        render();
      } }, detail.paused ? "Resume" : "Pause")));
  if (st.empty) dl.append(el("dt", {}, "Receive now"), el("dd", {}, el("span", { class: "badge " + (st.empty.reason === "KEYS_BLOCKED" ? "bad" : st.empty.reason === "PAUSED" ? "warn" : "ok") }, st.empty.reason),
    st.empty.nextVisibleAt ? " until " + fmtTime(st.empty.nextVisibleAt) : ""));
  const p = st.push;
  if (g.push) {
    dl.append(el("dt", {}, "Webhook"), el("dd", {}, el("code", {}, g.push.url)));
    if (p) {
      const state = pushState(p);
      dl.append(el("dt", {}, "Deliveries"), el("dd", {}, `${p.delivered} ok · ${p.failed} failed · ${p.queued} queued · ${p.inFlight} in flight`),
        el("dt", {}, "Webhook state"), el("dd", { "data-push-state": state.name }, el("span", { class: "badge " + state.badge }, state.text),
          p.lastError ? el("div", { class: state.name === "failing" ? "error" : "muted" },
            (state.name === "failing" ? "" : "earlier error" + (p.lastErrorAt ? " at " + fmtTime(p.lastErrorAt) : "") + ": ") + p.lastError) : null,
          p.lastSuccessAt ? el("div", { class: "muted" }, "last success " + fmtTime(p.lastSuccessAt)) : null,
          p.pausedUntil ? el("div", { class: "muted" }, "paused until " + fmtTime(p.pausedUntil)) : null));
    }
  }
  return el("section", { class: "card", "aria-labelledby": "group-" + g.name },
    el("h3", { id: "group-" + g.name }, g.name),
    g.messageModel === "BROADCASTING" ? el("p", { class: "muted" }, "BROADCASTING: each consumer has its own offsets; no group-wide rates or lag.") : groupCharts(g.name, h), dl,
    el("p", {}, el("a", { href: "#/dlq/" + enc(g.name) }, "Dead letters"),
      g.consumeMode === "ORDERLY" ? [" · ", el("a", { href: "#/blocked/" + enc(g.name) }, "Blocked keys")] : null));
}

async function pageGroups() {
  const { groups } = await api("GET", "/groups");
  const cards = await Promise.all(groups.map(groupCard));
  return [el("h2", {}, "Groups"),
    el("p", { class: "muted" }, "Rates and lag are sampled every 5 seconds while this page is open, from the groups' offsets: arrived is the messages reaching the group's queues (retries included), consumed its committed offsets moving."),
    cards.length ? el("div", { class: "cards" }, cards) : el("p", { class: "muted" }, "No groups yet.")];
}

// ---- Blocked keys -------------------------------------------------------

async function pageBlocked(group, consumerId) {
  const out = [el("h2", {}, "Blocked keys"), await groupPicker("blocked", group, true)];
  if (!group) return out;
  // A BROADCASTING group's keys block per consumer: ask which one. Only
  // skip applies there (it drops the head for that consumer, no DLQ);
  // park and resume need the group's shared retry topic (409).
  const g = await api("GET", `/groups/${enc(group)}`);
  const broadcast = g.messageModel === "BROADCASTING";
  if (broadcast) {
    const input = el("input", { id: "consumer-pick", value: consumerId || "", required: true, pattern: "[A-Za-z0-9_-]{1,127}" });
    out.push(el("form", { class: "row", onsubmit: (e) => { e.preventDefault(); if (input.value) location.hash = `#/blocked/${enc(group)}/${enc(input.value)}`; } },
      el("label", { for: "consumer-pick" }, "Consumer id", input), el("button", { type: "submit" }, "Show")));
    if (!consumerId) return out;
  }
  const who = broadcast ? { consumerId } : {};
  const [{ blocked }, { keys }] = await Promise.all([
    api("GET", `/groups/${enc(group)}/blocked` + (broadcast ? "?consumerId=" + enc(consumerId) : "")),
    broadcast ? { keys: [] } : api("GET", `/groups/${enc(group)}/keys?limit=10`)]);
  const act = (action, b) => async () => {
    const ok = action !== "skip" || confirm(broadcast
      ? `Drop message ${b.messageId} (key ${b.shardingKey}) for consumer ${consumerId}?`
      : `Send message ${b.messageId} (key ${b.shardingKey}) to the dead-letter queue?`);
    if (!ok) return;
    const r = await api("POST", `/groups/${enc(group)}/blocked/${action}`, { topic: b.topic, queueId: b.queueId, shardingKey: b.shardingKey, ...who });
    say(`${b.shardingKey}: ${r.state}`);
    render();
  };
  out.push(el("h3", {}, `Blocked in ${group}`), table(["Topic", "Queue", "Key", "Message", "State", "Since", { label: "Attempts", num: true }, "Reason", "Actions"],
    blocked.map((b) => el("tr", {},
      el("td", {}, b.topic), el("td", {}, b.queueId), el("td", {}, el("code", {}, b.shardingKey)),
      el("td", {}, b.messageId ? el("a", { href: `#/timeline/${enc(group)}/${enc(b.messageId)}` }, el("code", {}, b.messageId)) : ""),
      el("td", {}, el("span", { class: "badge " + (b.state === "BLOCKED" ? "bad" : "warn") }, b.state)),
      el("td", {}, fmtTime(b.since)), el("td", { class: "num" }, b.attempts), el("td", {}, b.lastReason || ""),
      el("td", {}, b.state === "BLOCKED"
        ? [el("button", { type: "button", class: "danger", onclick: act("skip", b), "aria-label": `Skip ${b.messageId} of key ${b.shardingKey}` }, "Skip"),
          broadcast ? null : [" ", el("button", { type: "button", onclick: act("park", b), "aria-label": `Park key ${b.shardingKey}` }, "Park")]]
        : el("button", { type: "button", class: "primary", onclick: act("resume", b), "aria-label": `Resume key ${b.shardingKey}` }, "Resume"))))));
  if (broadcast) return out; // per-key lag is CLUSTERING only
  out.push(el("h3", {}, "Oldest keys"), table(["Topic", "Queue", "Key", { label: "Depth", num: true }, { label: "Oldest age (s)", num: true }, "Oldest message"],
    keys.map((k) => el("tr", {}, el("td", {}, k.topic), el("td", {}, k.queueId), el("td", {}, el("code", {}, k.shardingKey)),
      el("td", { class: "num" }, k.depth), el("td", { class: "num" }, k.oldestAgeSeconds),
      el("td", {}, el("a", { href: `#/timeline/${enc(group)}/${enc(k.oldestMessageId)}` }, el("code", {}, k.oldestMessageId)))))));
  return out;
}

// ---- Dead letters -------------------------------------------------------

async function pageDLQ(group) {
  const out = [el("h2", {}, "Dead letters"), await groupPicker("dlq", group, false)];
  if (!group) return out;
  const page = await api("GET", `/groups/${enc(group)}/dlq?limit=100`);
  const boxes = [];
  const rows = page.messages.map((m) => {
    const cb = el("input", { type: "checkbox", value: m.messageId, id: "dl-" + m.messageId, "aria-label": "Select " + m.messageId });
    boxes.push(cb);
    return el("tr", {}, el("td", {}, cb),
      el("td", {}, el("a", { href: `#/timeline/${enc(group)}/${enc(m.messageId)}` }, el("code", {}, m.messageId))),
      el("td", {}, m.topic), el("td", {}, m.tags || ""), el("td", { class: "num" }, m.reconsumeTimes),
      el("td", {}, m.lastReason || el("span", { class: "muted" }, "—")),
      el("td", {}, (m.body ?? "(binary)").slice(0, 80)));
  });
  const redrive = async (ids) => {
    if (!confirm(ids.length ? `Redrive ${plural(ids.length, "selected dead letter")} to ${group}?` : `Redrive every dead letter of ${group}?`)) return;
    const r = await api("POST", `/groups/${enc(group)}/dlq/redrive`, ids.length ? { messageIds: ids } : {});
    say(`Redriven: ${r.redriven ?? r.moved ?? 0}`);
    render();
  };
  // Redrive by filter (a job): count first with a dry run.
  const tags = el("input", { id: "f-tags", placeholder: "created || paid" });
  const reason = el("input", { id: "f-reason", placeholder: "503" });
  const count = el("output", { id: "f-count", for: "f-tags f-reason", "aria-live": "polite" });
  const filter = () => { const f = {}; if (tags.value.trim()) f.tags = tags.value.trim(); if (reason.value.trim()) f.reason = reason.value.trim(); return f; };
  const dry = async () => {
    const r = await api("POST", `/groups/${enc(group)}/dlq/redrive`, { filter: filter(), dryRun: true });
    count.textContent = `${plural(r.matched, "dead letter")} ${r.matched === 1 ? "matches" : "match"}.`;
  };
  const run = async () => {
    if (!confirm(`Redrive the dead letters of ${group} matching this filter?`)) return;
    let job = await api("POST", `/groups/${enc(group)}/dlq/redrive`, { filter: filter() });
    count.textContent = `Job ${job.id}: ${job.state}…`;
    const end = Date.now() + 60000;
    while (job.state === "RUNNING" && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 300));
      job = await api("GET", `/jobs/${enc(job.id)}`);
    }
    count.textContent = `Job ${job.id}: ${job.state}, ${job.moved} of ${job.matched} redriven.`;
    say(`Redriven: ${job.moved}`);
    render();
  };
  out.push(el("form", { class: "row", "aria-label": "Redrive by filter", onsubmit: (e) => { e.preventDefault(); dry(); } },
    el("label", { for: "f-tags" }, "Tags", tags), el("label", { for: "f-reason" }, "Reason contains", reason),
    el("button", { type: "submit" }, "Count (dry run)"), el("button", { type: "button", class: "primary", onclick: run }, "Redrive matching"), count));
  out.push(el("p", {}, `${page.messages.length} shown${page.nextCursor ? " (more exist)" : ""}.`),
    el("div", { class: "row" },
      el("button", { type: "button", class: "primary", onclick: () => redrive(boxes.filter((b) => b.checked).map((b) => b.value)) }, "Redrive selected"), " ",
      el("button", { type: "button", onclick: () => redrive([]), disabled: !page.messages.length }, "Redrive all")),
    table(["", "Message", "Topic", "Tags", { label: "Reconsumed", num: true }, "Reason", "Body"], rows));
  return out;
}

// ---- Timeline -----------------------------------------------------------

async function pageTimeline(group, id) {
  const gi = el("input", { id: "tl-group", value: group || "", required: true });
  const mi = el("input", { id: "tl-id", value: id || "", required: true, size: 34 });
  const out = [el("h2", {}, "Message timeline"),
    el("form", { class: "row", onsubmit: (e) => { e.preventDefault(); location.hash = `#/timeline/${enc(gi.value.trim())}/${enc(mi.value.trim())}`; } },
      el("label", { for: "tl-group" }, "Group", gi), el("label", { for: "tl-id" }, "Message id", mi), el("button", { type: "submit" }, "Show"))];
  if (!group || !id) return out;
  const { events } = await api("GET", `/groups/${enc(group)}/messages/${enc(id)}/timeline`);
  out.push(el("ol", { class: "timeline", "aria-label": "Events of " + id }, events.map((e) => el("li", { class: e.type },
    el("strong", {}, e.type), " ", el("span", { class: "muted" }, fmtTime(e.at)),
    e.attempt ? ` · attempt ${e.attempt}` : "", e.consumerId ? ` · consumer ${e.consumerId}` : "",
    e.delayLevel !== undefined ? ` · delay level ${e.delayLevel}` : "", e.reason ? ` · “${e.reason}”` : "",
    e.jobId ? [" · job ", el("code", { class: "job" }, e.jobId)] : ""))));
  out.push(el("p", { class: "muted" }, "Events are kept in memory per group (the last 4096) and forgotten on restart; PUBLISHED comes from the stored message."));
  return out;
}

// ---- Router -------------------------------------------------------------

const routes = { topics: pageTopics, groups: pageGroups, blocked: pageBlocked, dlq: pageDLQ, timeline: pageTimeline };
let refresh;
// renders counts render calls: one that finishes after a newer one started
// (an action's refresh racing a navigation) must not replace its page.
let renders = 0;

async function render(fromNav) {
  const seq = ++renders;
  const parts = (location.hash.replace(/^#\/?/, "") || "topics").split("/").map(decodeURIComponent);
  const name = routes[parts[0]] ? parts[0] : "topics";
  for (const a of document.querySelectorAll("nav a")) {
    if (a.getAttribute("href") === "#/" + name) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  clearTimeout(refresh);
  try {
    const nodes = await routes[name](...parts.slice(1));
    if (seq !== renders) return; // a newer render owns the page
    const active = document.activeElement && document.activeElement.id;
    main().replaceChildren(...nodes);
    main().setAttribute("data-page", name);
    if (fromNav) main().focus();
    else if (active && document.getElementById(active)) document.getElementById(active).focus();
    document.title = `mqgate · ${name}`;
  } catch (e) {
    if (seq !== renders) return;
    if (e instanceof NeedKey) { keyForm(() => render(true)); return; }
    main().replaceChildren(el("h2", {}, "Error"), el("p", { class: "error", role: "alert" }, e.message));
  }
  if (name === "groups") refresh = setTimeout(() => render(false), SAMPLE_MS);
}

window.addEventListener("hashchange", () => render(true));
window.addEventListener("DOMContentLoaded", () => {
  const f = document.getElementById("forget-key");
  f.hidden = !sessionStorage.getItem(KEY);
  f.addEventListener("click", () => { sessionStorage.removeItem(KEY); f.hidden = true; render(true); });
  render(false);
});
