// mqgate console: live tail of a group over its consume stream
// (docs/streaming.md). Loaded after app.js, whose el, api, enc, fmtTime,
// table, groupPicker, say, routes and KEY it uses; it adds the "tail"
// route. The key goes in the mqgate.key.<base64url> subprotocol, since a
// browser WebSocket cannot set an Authorization header.
"use strict";

const TAIL_ROWS = 100;
const TAIL_OUTSTANDING = 50;
// The one open tail; closed when the page is left.
let tailSocket = null;

function stopTail() {
  if (tailSocket) {
    tailSocket.close(1000);
    tailSocket = null;
  }
}

window.addEventListener("hashchange", () => {
  if (!location.hash.startsWith("#/tail/")) stopTail();
});

function keyProtocol(key) {
  const b = new TextEncoder().encode(key);
  let s = "";
  for (const c of b) s += String.fromCharCode(c);
  return "mqgate.key." + btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function bodyPreview(m) {
  if (m.body !== undefined) return m.body.length > 200 ? m.body.slice(0, 200) + "…" : m.body;
  if (m.bodyBase64 !== undefined) return `(${Math.floor((m.bodyBase64.length * 3) / 4)} bytes)`;
  return "";
}

async function pageTail(group) {
  stopTail();
  const out = [el("h2", {}, "Live tail"), await groupPicker("tail", group)];
  if (!group) {
    out.push(el("p", { class: "muted" }, "Choose a group to watch its deliveries as the server pushes them."));
    return out;
  }
  const g = await api("GET", "/groups/" + enc(group));
  const broadcast = g.messageModel === "BROADCASTING";
  const cid = el("input", { id: "tail-consumer", value: "console-tail", required: broadcast, size: 16 });
  const ack = el("input", { id: "tail-ack", type: "checkbox", checked: true });
  const state = el("output", { id: "tail-state", "aria-live": "polite" }, "not started");
  const rows = el("tbody", {});
  const start = el("button", { type: "submit", class: "primary" }, "Start tail");
  const stop = el("button", { type: "button", disabled: true, onclick: () => stopTail() }, "Stop");
  let shown = 0;

  const begin = () => {
    stopTail();
    const q = new URLSearchParams({ maxOutstandingMessages: String(TAIL_OUTSTANDING) });
    if (broadcast) q.set("consumerId", cid.value.trim());
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + `/v1/groups/${enc(group)}/stream?` + q;
    const key = sessionStorage.getItem(KEY);
    const ws = new WebSocket(url, key ? ["mqgate.v1", keyProtocol(key)] : ["mqgate.v1"]);
    tailSocket = ws;
    let ids = 0;
    state.textContent = "connecting…";
    start.disabled = true;
    stop.disabled = false;
    ws.addEventListener("message", (ev) => {
      let f;
      try { f = JSON.parse(ev.data); } catch { return; }
      if (f.type === "open") {
        state.textContent = `live · stream ${f.stream} · ${shown} shown`;
      } else if (f.type === "messages") {
        const handles = [];
        for (const m of f.messages) {
          shown++;
          rows.prepend(el("tr", {}, el("td", {}, new Date().toLocaleTimeString()), el("td", {}, el("code", {}, m.messageId)),
            el("td", {}, m.topic), el("td", {}, m.tags || ""), el("td", { class: "num" }, m.reconsumeTimes), el("td", {}, bodyPreview(m))));
          handles.push(m.receiptHandle);
        }
        while (rows.children.length > TAIL_ROWS) rows.lastElementChild.remove();
        // Acked once shown, as `mqgate sub` does; unacked, the stream stops
        // at its limit until the leases run out.
        if (ack.checked && handles.length) ws.send(JSON.stringify({ type: "ack", id: "a" + ++ids, receiptHandles: handles }));
        state.textContent = `live · ${shown} shown`;
      } else if (f.type === "empty") {
        state.textContent = `live · ${shown} shown · waiting (${f.empty && f.empty.reason})`;
      } else if (f.type === "error") {
        say("stream error: " + ((f.problem && (f.problem.detail || f.problem.title)) || "unknown"));
      }
    });
    ws.addEventListener("close", (ev) => {
      if (tailSocket === ws) tailSocket = null;
      state.textContent = `closed (${ev.code}${ev.reason ? " " + ev.reason : ""}) · ${shown} shown`;
      start.disabled = false;
      stop.disabled = true;
    });
  };

  out.push(el("p", { class: "muted" }, broadcast
    ? "A BROADCASTING group gives each consumer id its own copy: tailing as its own id takes nothing from other consumers."
    : "Tailing consumes: with “Acknowledge” on, the messages shown are acked and the group's other consumers do not get them."));
  out.push(el("form", { class: "row", "aria-label": "Tail " + group, onsubmit: (e) => { e.preventDefault(); begin(); } },
    broadcast ? el("label", { for: "tail-consumer" }, "Consumer id", cid) : null,
    el("label", { for: "tail-ack" }, "Acknowledge", ack), start, stop, state));
  out.push(table(["Received", "Message", "Topic", "Tags", { label: "Reconsumed", num: true }, "Body"], [], `Newest first, the last ${TAIL_ROWS}`));
  out[out.length - 1].querySelector("tbody").replaceWith(rows);
  return out;
}

routes.tail = pageTail;
