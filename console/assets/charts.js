// mqgate console charts: small time-series line charts as inline SVG,
// with a y axis in the series' unit, a time axis and a legend. No
// library: two charts per group card do not justify one, and the CSP
// keeps every style in app.css (classes, never style attributes).
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

// niceStep is a 1-2-5 step that splits max into about n intervals.
function niceStep(max, n) {
  const raw = max / n;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

// fmtNum writes an axis value briefly: 0.5, 12, 1.2k, 3M.
function fmtNum(v) {
  const a = Math.abs(v);
  if (a >= 1e6) return +(v / 1e6).toFixed(1) + "M";
  if (a >= 1e3) return +(v / 1e3).toFixed(1) + "k";
  if (a > 0 && a < 10 && v % 1) return +v.toFixed(2) + "";
  return Math.round(v) + "";
}

// timeChart draws series over the last windowMs up to now.
//   title: what is drawn ("Rates of billing"), for the accessible name;
//   unit: the y axis unit ("msg/s", "messages");
//   series: [{name, cls ("s0", "s1"), points: [{t (ms), v}]}].
function timeChart({ title, unit, series, windowMs, now }) {
  const W = 330, H = 160, L = 46, R = 10, T = 22, B = 30;
  const pw = W - L - R, ph = H - T - B;
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("class", "chart");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("role", "img");
  const add = (parent, tag, attrs, text) => {
    const n = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
    if (text !== undefined) n.textContent = text;
    parent.append(n);
    return n;
  };
  const t0 = now - windowMs;
  const all = series.flatMap((s) => s.points.filter((p) => p.t >= t0));
  const peak = Math.max(0, ...all.map((p) => p.v));
  const step = niceStep(peak > 0 ? peak : 1, 4);
  const ymax = Math.max(step, Math.ceil(peak / step) * step);
  const x = (t) => L + ((t - t0) / windowMs) * pw;
  const y = (v) => T + ph * (1 - v / ymax);

  // Accessible summary: the latest value of each series and the peak.
  const latest = series.map((s) => {
    const p = s.points[s.points.length - 1];
    return `${s.name} ${p ? fmtNum(p.v) : "no data"}`;
  });
  svg.setAttribute("aria-label", `${title} in ${unit} over the last ${Math.round(windowMs / 60000)} minutes: now ${latest.join(", ")}; peak ${fmtNum(peak)}`);
  add(svg, "title", {}, `${title} (${unit})`);

  // Y axis: grid lines and labels at each step, the unit above.
  const yAxis = add(svg, "g", { class: "axis y-axis" });
  for (let v = 0; v <= ymax + step / 2; v += step) {
    add(yAxis, "line", { class: "grid", x1: L, x2: L + pw, y1: y(v).toFixed(1), y2: y(v).toFixed(1) });
    add(yAxis, "text", { x: L - 4, y: (y(v) + 3).toFixed(1), "text-anchor": "end" }, fmtNum(v));
  }
  add(yAxis, "text", { class: "unit", x: 2, y: 11 }, unit);
  add(yAxis, "line", { class: "axis-line", x1: L, x2: L, y1: T, y2: T + ph });

  // Time axis: a tick a minute, labelled in minutes before now.
  const xAxis = add(svg, "g", { class: "axis x-axis" });
  add(xAxis, "line", { class: "axis-line", x1: L, x2: L + pw, y1: T + ph, y2: T + ph });
  const minutes = Math.round(windowMs / 60000);
  for (let m = minutes; m >= 0; m--) {
    const xt = x(now - m * 60000).toFixed(1);
    add(xAxis, "line", { class: "tick", x1: xt, x2: xt, y1: T + ph, y2: T + ph + 4 });
    add(xAxis, "text", { x: xt, y: T + ph + 14, "text-anchor": m === minutes ? "start" : m === 0 ? "end" : "middle" }, m === 0 ? "now" : `−${m} min`);
  }
  add(xAxis, "text", { class: "unit", x: L + pw / 2, y: H - 2, "text-anchor": "middle" }, "time");

  // Series, then the legend along the top.
  series.forEach((s) => {
    const pts = s.points.filter((p) => p.t >= t0).map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`);
    if (pts.length === 1) add(svg, "circle", { class: "dot " + s.cls, cx: pts[0].split(",")[0], cy: pts[0].split(",")[1], r: 2.5 });
    else if (pts.length) add(svg, "polyline", { class: "line " + s.cls, points: pts.join(" ") });
  });
  let lx = L + pw;
  for (const s of [...series].reverse()) {
    add(svg, "text", { class: "legend", x: lx, y: 11, "text-anchor": "end" }, s.name);
    lx -= s.name.length * 6 + 4; // about 6 px a character at 10 px
    add(svg, "line", { class: "key " + s.cls, x1: lx - 12, x2: lx, y1: 7, y2: 7 });
    lx -= 30;
  }
  if (!all.length) add(svg, "text", { class: "empty", x: L + pw / 2, y: T + ph / 2, "text-anchor": "middle" }, "collecting samples…");
  return svg;
}
