// kubesim run report: draws the timeline from the JSON in #report-data on one canvas (lanes on simulated
// time, zoom with the wheel or the buttons, pan by dragging), shows a hover tip and, on a click, the item's
// full trace line, its detail and the trace around it. Text from the run is only ever set with textContent.
// Tick kinds (see html.rs): 0-3 an etcd watch's event, created, progress and cancel; 4-5 a Kubernetes
// watch's event and ERROR; 6-7 an informer's first list and relists (full height, with their
// resourceVersion and apiserver); 8 an informer's event.
"use strict";
(function () {
  const body = document.body;
  const errors = [];
  window.addEventListener("error", (e) => { errors.push(String(e.message)); body.dataset.errors = errors.join(" | "); });
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const canvas = document.getElementById("canvas");
  const ctx = canvas.getContext("2d");
  const labels = document.getElementById("labels");
  const tip = document.getElementById("tip");
  const AXIS = 22;
  const HEIGHT = { cluster: 26, member: 30, server: 30, client: 40, informer: 34 };
  const OUTCOME = ["#2e9b4f", "#d32f2f", "#f0a020", "#9aa3af"];
  const OUTCOME_NAME = ["ok", "error", "unknown", "not sent"];
  const SPAN = { partition: "rgba(211,47,47,0.16)", clog: "rgba(240,160,32,0.22)", network: "rgba(240,160,32,0.12)",
    down: "rgba(40,40,40,0.22)", paused: "rgba(90,90,200,0.18)", failpoint: "rgba(156,39,176,0.10)" };
  const MARK = { leader: "#1f6feb", "stepped-down": "#7d8da8", compaction: "#00897b", snapshot: "#6a1b9a",
    failpoint: "#9c27b0", fault: "#5a6475", panic: "#b71c1c", lease: "#8d6e63", note: "#b0b7c3", violation: "#d50000",
    tombstone: "#4e342e", expired: "#e65100", "informer-restart": "#37474f", "store-matches": "#2e7d32",
    "store-differs": "#c62828" };
  const TICK = ["#3949ab", "#43a047", "#90a4ae", "#e65100", "#3949ab", "#e65100", "#00695c", "#ad1457", "#00897b"];
  const TICK_NAME = { 6: "list", 7: "relist" };
  // Kinds whose ticks take their watch's hue: etcd events, Kubernetes watch events, informer events.
  const HUED = new Set([0, 4, 8]);

  // Lanes, stacked top to bottom under the time axis.
  const lanes = D.lanes.map(([name, kind], i) => ({ name, kind, i, h: HEIGHT[kind] || 30, y: 0 }));
  let y = AXIS;
  for (const l of lanes) { l.y = y; y += l.h; }
  const totalHeight = y + 4;
  for (const l of lanes) {
    const div = document.createElement("div");
    div.className = "lane-label " + l.kind;
    div.dataset.lane = String(l.i);
    div.style.top = l.y + "px";
    div.style.height = l.h + "px";
    div.textContent = l.name;
    div.title = l.name;
    labels.appendChild(div);
  }
  labels.style.height = totalHeight + "px";

  // Per lane, indices sorted by start time: drawing culls and hover searches by time.
  function byLane(cols, time) {
    const out = lanes.map(() => []);
    for (let i = 0; i < cols.lane.length; i++) out[cols.lane[i]].push(i);
    for (const list of out) list.sort((a, b) => time[a] - time[b]);
    return out;
  }
  const barsBy = byLane(D.bars, D.bars.start);
  const ticksBy = byLane(D.ticks, D.ticks.at);
  const marksBy = byLane(D.markers, D.markers.at);
  // The longest bar per lane bounds how far back a search by start time must look.
  const longest = lanes.map((l) => barsBy[l.i].reduce((m, b) => Math.max(m, D.bars.end[b] - D.bars.start[b]), 0));

  // What the violations point at, drawn highlighted.
  const hot = { bar: new Set(), tick: new Set(), marker: new Set() };
  for (const v of D.violations) for (const [k, i] of v.pointers) hot[k].add(i);

  const end = Math.max(D.end, 1);
  let t0 = 0, t1 = end * 1.02 + 1;
  let selected = null;
  let width = 0;

  function resize() {
    const ratio = window.devicePixelRatio || 1;
    width = Math.max(canvas.parentElement.clientWidth - labels.offsetWidth, 100);
    canvas.style.width = width + "px";
    canvas.style.height = totalHeight + "px";
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(totalHeight * ratio);
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  }
  const xOf = (t) => (t - t0) / (t1 - t0) * width;
  const tOf = (x) => t0 + x / width * (t1 - t0);

  // First index in sorted `list` whose time is >= t.
  function lower(list, time, t) {
    let lo = 0, hi = list.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (time[list[mid]] < t) lo = mid + 1; else hi = mid; }
    return lo;
  }

  function fmt(us) {
    const s = us / 1e6;
    return (t1 - t0) < 5e5 ? s.toFixed(4) + "s" : (t1 - t0) < 5e6 ? s.toFixed(3) + "s" : s.toFixed(2) + "s";
  }

  function drawAxis() {
    ctx.fillStyle = "#f6f7f9";
    ctx.fillRect(0, 0, width, AXIS);
    const span = t1 - t0;
    const raw = span / 8;
    const pow = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw);
    ctx.fillStyle = "#5a6475";
    ctx.font = "11px sans-serif";
    ctx.strokeStyle = "#eceff3";
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const x = Math.round(xOf(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, AXIS - 4); ctx.lineTo(x, totalHeight); ctx.stroke();
      ctx.fillText(fmt(t), x + 2, 13);
    }
  }

  function drawSpans() {
    const S = D.spans;
    for (let i = 0; i < S.lane.length; i++) {
      const l = lanes[S.lane[i]];
      const a = Math.max(xOf(S.start[i]), -1), b = Math.min(xOf(S.end[i]), width + 1);
      if (b < 0 || a > width) continue;
      if (S.kind[i] === "watch") {
        ctx.fillStyle = "rgba(57,73,171,0.35)";
        ctx.fillRect(a, l.y + l.h - 3, Math.max(b - a, 1), 1);
        continue;
      }
      ctx.fillStyle = SPAN[S.kind[i]] || "rgba(0,0,0,0.1)";
      ctx.fillRect(a, l.y, Math.max(b - a, 1), l.h);
      if (S.kind[i] === "partition" || S.kind[i] === "down") {
        ctx.fillStyle = S.kind[i] === "down" ? "#444" : "#c62828";
        ctx.fillRect(a, l.y, Math.max(b - a, 1), 2);
      }
    }
  }

  function drawBars(l) {
    const B = D.bars, list = barsBy[l.i];
    if (!list.length) return 0;
    const top = l.y + 3, h = l.kind === "client" ? Math.round(l.h * 0.5) : l.h - 6;
    let from = lower(list, B.start, t0 - longest[l.i]);
    let lastX = -2, lastC = -1, drawn = 0;
    for (let k = from; k < list.length; k++) {
      const i = list[k];
      if (B.start[i] > t1) break;
      if (B.end[i] < t0) continue;
      const a = xOf(B.start[i]), w = Math.max(xOf(B.end[i]) - a, 1);
      const px = Math.floor(a);
      // Many bars inside one pixel: one is enough, unless it is evidence.
      if (w <= 1 && px === lastX && B.outcome[i] === lastC && !hot.bar.has(i)) continue;
      lastX = px; lastC = B.outcome[i];
      ctx.fillStyle = OUTCOME[B.outcome[i]];
      ctx.fillRect(a, top, w, h);
      drawn++;
      // Wide enough: a gap before it, so that back-to-back requests read apart, and its text inside.
      if (w > 4) { ctx.fillStyle = "#fff"; ctx.fillRect(a, top, 1, h); }
      if (w > 48) {
        ctx.save();
        ctx.beginPath(); ctx.rect(a + 2, top, w - 4, h); ctx.clip();
        ctx.fillStyle = B.outcome[i] === 2 ? "#1d2330" : "#fff";
        ctx.font = "11px monospace";
        const text = lineText(B, i);
        ctx.fillText(text.slice(text.indexOf(" ") + 1), a + 3, top + h / 2 + 4);
        ctx.restore();
      }
      if (hot.bar.has(i)) {
        ctx.strokeStyle = "#d50000"; ctx.lineWidth = 2;
        ctx.strokeRect(a - 1, top - 1, w + 2, h + 2); ctx.lineWidth = 1;
      }
    }
    return drawn;
  }

  function drawTicks(l) {
    const T = D.ticks, list = ticksBy[l.i];
    if (!list.length) return;
    const top = l.y + Math.round(l.h * 0.56), h = Math.round(l.h * 0.4);
    let lastX = -2, lastText = -100;
    for (let k = lower(list, T.at, t0); k < list.length; k++) {
      const i = list[k];
      if (T.at[i] > t1) break;
      const x = Math.floor(xOf(T.at[i])) + 0.5, kind = T.kind[i], list6 = kind === 6 || kind === 7;
      if (x === lastX && !hot.tick.has(i) && !list6) continue;
      lastX = x;
      ctx.strokeStyle = hot.tick.has(i) ? "#d50000" : HUED.has(kind) ? `hsl(${(T.watch[i] * 67) % 360},60%,40%)` : TICK[kind];
      ctx.lineWidth = hot.tick.has(i) ? 3 : list6 ? 2 : 1;
      // A list replaces what the informer believes: it spans the lane; events sit in its lower half.
      const a = list6 ? l.y + 3 : top, b = list6 ? l.y + l.h - 3 : top + h;
      ctx.beginPath(); ctx.moveTo(x, a); ctx.lineTo(x, b); ctx.stroke();
      if (list6) { ctx.beginPath(); ctx.moveTo(x, a); ctx.lineTo(x + 4, a); ctx.moveTo(x, b); ctx.lineTo(x + 4, b); ctx.stroke(); }
      ctx.lineWidth = 1;
      // Revisions beside the ticks when there is room; a list's apiserver too.
      if (x - lastText > 34 && (HUED.has(kind) || list6)) {
        ctx.fillStyle = list6 ? TICK[kind] : "#3a4252"; ctx.font = "10px sans-serif";
        let text = "r" + T.rev[i];
        if (list6) {
          const from = /from (\S+?):/.exec(lineText(T, i));
          text = TICK_NAME[kind] + " " + text + (from ? " " + from[1] : "");
        }
        ctx.fillText(text, x + 3, list6 ? l.y + 12 : top + h - 2);
        lastText = x + (list6 ? ctx.measureText(text).width : 0);
      }
    }
  }

  let drawnViolationMarkers = 0;
  function drawMarkers(l) {
    const M = D.markers, list = marksBy[l.i];
    for (let k = lower(list, M.at, t0); k < list.length; k++) {
      const i = list[k];
      if (M.at[i] > t1) break;
      const x = xOf(M.at[i]), kind = M.kind[i];
      const big = kind === "violation" || kind === "panic" || kind === "store-differs" || hot.marker.has(i);
      const r = big ? 6 : kind === "note" ? 2.5 : 4;
      const cy = l.y + (kind === "note" ? l.h - 5 : 7);
      ctx.fillStyle = MARK[kind] || "#888";
      ctx.beginPath();
      ctx.moveTo(x, cy - r); ctx.lineTo(x + r, cy); ctx.lineTo(x, cy + r); ctx.lineTo(x - r, cy); ctx.closePath();
      ctx.fill();
      if (big) {
        drawnViolationMarkers++;
        ctx.strokeStyle = "#d50000"; ctx.beginPath(); ctx.moveTo(x, l.y); ctx.lineTo(x, l.y + l.h); ctx.stroke();
      }
    }
  }

  function draw() {
    ctx.clearRect(0, 0, width, totalHeight);
    for (const l of lanes) {
      ctx.fillStyle = l.i % 2 ? "#fbfcfd" : "#ffffff";
      ctx.fillRect(0, l.y, width, l.h);
    }
    drawAxis();
    drawSpans();
    let bars = 0;
    drawnViolationMarkers = 0;
    for (const l of lanes) { bars += drawBars(l); drawTicks(l); drawMarkers(l); }
    for (const l of lanes) {
      ctx.strokeStyle = "#eef0f3";
      ctx.beginPath(); ctx.moveTo(0, l.y + l.h - 0.5); ctx.lineTo(width, l.y + l.h - 0.5); ctx.stroke();
    }
    if (selected) {
      const p = place(selected);
      if (p) {
        const x = xOf(p.t);
        ctx.strokeStyle = "#000"; ctx.setLineDash([3, 3]);
        ctx.beginPath(); ctx.moveTo(x, AXIS); ctx.lineTo(x, totalHeight); ctx.stroke();
        ctx.setLineDash([]);
      }
    }
    body.dataset.drawnBars = String(bars);
    body.dataset.drawnViolationMarkers = String(drawnViolationMarkers);
  }

  function place(item) {
    const [k, i] = item;
    if (k === "bar") return { lane: D.bars.lane[i], t: D.bars.start[i] };
    if (k === "tick") return { lane: D.ticks.lane[i], t: D.ticks.at[i] };
    if (k === "marker") return { lane: D.markers.lane[i], t: D.markers.at[i] };
    if (k === "span") return { lane: D.spans.lane[i], t: D.spans.start[i] };
    return null;
  }

  // The trace line (without its time) that an item came from, or its own label.
  function lineText(cols, i) {
    if (cols.label[i] != null) return cols.label[i];
    const l = D.trace[cols.line[i]] || "";
    return l.slice(l.indexOf(" ") + 1);
  }
  function label(item) {
    const [k, i] = item;
    if (k === "bar") {
      const B = D.bars;
      return `${lineText(B, i)}\n${OUTCOME_NAME[B.outcome[i]]}, ${fmt(B.start[i])} to ${fmt(B.end[i])}`;
    }
    if (k === "tick") return lineText(D.ticks, i) + "\nat " + fmt(D.ticks.at[i]);
    if (k === "marker") return D.markers.label[i] + "\nat " + fmt(D.markers.at[i]);
    if (k === "span") return D.spans.label[i] + `\n${D.spans.kind[i]}, ${fmt(D.spans.start[i])} to ${fmt(D.spans.end[i])}`;
    return "";
  }
  function lineOf(item) {
    const [k, i] = item;
    const cols = { bar: D.bars, tick: D.ticks, marker: D.markers, span: D.spans }[k];
    return cols.line[i];
  }

  // The item under (x, y): a marker, then a tick or bar within 4 pixels, then a shaded span.
  function hit(x, yy) {
    const l = lanes.find((l) => yy >= l.y && yy < l.y + l.h);
    if (!l) return null;
    const t = tOf(x), slack = (t1 - t0) / width * 4;
    const near = (list, time, kind) => {
      let best = null, dist = slack;
      for (let k = lower(list, time, t - slack); k < list.length && time[list[k]] <= t + slack; k++) {
        const d = Math.abs(time[list[k]] - t);
        if (d <= dist) { dist = d; best = [kind, list[k]]; }
      }
      return best;
    };
    const m = near(marksBy[l.i], D.markers.at, "marker");
    if (m) return m;
    if ((l.kind === "client" && yy > l.y + l.h * 0.5) || l.kind === "informer") {
      const tk = near(ticksBy[l.i], D.ticks.at, "tick");
      if (tk) return tk;
    }
    const list = barsBy[l.i], B = D.bars;
    for (let k = lower(list, B.start, t + slack) - 1; k >= 0 && B.start[list[k]] >= t - longest[l.i] - slack; k--) {
      const i = list[k];
      if (B.start[i] - slack <= t && t <= B.end[i] + slack) return ["bar", i];
    }
    const S = D.spans;
    for (let i = 0; i < S.lane.length; i++) {
      if (S.lane[i] === l.i && S.start[i] <= t && t <= S.end[i] && S.kind[i] !== "watch") return ["span", i];
    }
    return null;
  }

  function select(item, why) {
    selected = item;
    const title = document.getElementById("detail-title");
    const text = document.getElementById("detail-text");
    const near = document.getElementById("trace-near");
    near.textContent = "";
    if (!item) { draw(); return; }
    const [k, i] = item;
    title.textContent = (why ? why + ": " : "") + k + " on " + lanes[place(item).lane].name;
    const ln = lineOf(item);
    let s = ln != null ? "trace line " + (ln + 1) + ":\n" + D.trace[ln] + "\n\n" : "";
    s += label(item);
    if (k === "bar") {
      const d = D.bars.detail[i];
      s += "\n\n" + (d == null ? "(detail left out to keep the page small; the trace line above has the request and its outcome)"
        : typeof d === "string" ? d : JSON.stringify(d, null, 2));
    }
    text.textContent = s;
    // The trace around the item: the lines near its own, or near its time.
    let at = ln;
    if (at == null) {
      const t = place(item).t;
      at = D.trace.findIndex((l) => { const m = /^t=(\d+)\.(\d+)s/.exec(l); return m && (+m[1] * 1e6 + +m[2] * 1e3) >= t; });
      if (at < 0) at = D.trace.length - 1;
    }
    for (let j = Math.max(0, at - 8); j < Math.min(D.trace.length, at + 9); j++) {
      const row = document.createElement("span");
      if (j === at) row.className = "here";
      row.textContent = D.trace[j] + "\n";
      near.appendChild(row);
    }
    draw();
  }

  // Zoom and pan.
  function zoom(factor, x) {
    const t = tOf(x);
    const span = Math.min(Math.max((t1 - t0) * factor, 50), end * 1.5 + 1000);
    t0 = t - (x / width) * span;
    t1 = t0 + span;
    draw();
  }
  canvas.addEventListener("wheel", (e) => { e.preventDefault(); zoom(Math.pow(1.0015, e.deltaY), e.offsetX); }, { passive: false });
  let drag = null;
  canvas.addEventListener("mousedown", (e) => { drag = { x: e.offsetX, t0, t1, moved: false }; });
  window.addEventListener("mouseup", (e) => {
    if (drag && !drag.moved && e.target === canvas) select(hit(e.offsetX, e.offsetY));
    drag = null;
  });
  let pending = null;
  canvas.addEventListener("mousemove", (e) => {
    if (drag) {
      const dt = (e.offsetX - drag.x) / width * (drag.t1 - drag.t0);
      if (Math.abs(e.offsetX - drag.x) > 2) drag.moved = true;
      t0 = drag.t0 - dt; t1 = drag.t1 - dt;
      draw();
      tip.hidden = true;
      return;
    }
    const ev = { x: e.offsetX, y: e.offsetY, cx: e.clientX, cy: e.clientY };
    if (pending === null) {
      pending = requestAnimationFrame(() => {
        pending = null;
        const item = hit(ev.x, ev.y);
        if (!item) { tip.hidden = true; return; }
        tip.textContent = label(item);
        tip.hidden = false;
        tip.style.left = Math.min(ev.cx + 12, window.innerWidth - 300) + "px";
        tip.style.top = ev.cy + 14 + "px";
      });
    }
  });
  canvas.addEventListener("mouseleave", () => { tip.hidden = true; });
  document.getElementById("fit").addEventListener("click", () => { t0 = 0; t1 = end * 1.02 + 1; draw(); });
  document.getElementById("zoom-in").addEventListener("click", () => zoom(0.5, width / 2));
  document.getElementById("zoom-out").addEventListener("click", () => zoom(2, width / 2));

  // Violations: a link zooms to the evidence and selects it.
  function showViolation(n) {
    const v = D.violations[n];
    if (!v) return;
    for (const li of document.querySelectorAll("li.violation")) li.classList.toggle("current", li.dataset.violation === String(n));
    if (v.at != null) {
      const ts = v.pointers.map((p) => place(p).t);
      const lo = Math.min(...ts), hi = Math.max(...ts);
      const pad = Math.max((hi - lo) * 0.3, end / 40, 2000);
      t0 = lo - pad; t1 = hi + pad;
    }
    const first = v.pointers[0];
    select(first ? [first[0], first[1]] : null, v.kind);
    const text = document.getElementById("detail-text");
    text.textContent = v.title + "\n\n" + v.detail + "\n\nEvidence:\n" +
      v.pointers.map(([k, i, role]) => {
        const what = label([k, i]).split("\n")[0];
        return "  " + (what === role ? role : role + " — " + what);
      }).join("\n") +
      (first ? "\n\n" + text.textContent : "");
    document.getElementById("timeline").scrollIntoView({ block: "nearest" });
  }
  for (const a of document.querySelectorAll("li.violation a")) {
    a.addEventListener("click", (e) => { e.preventDefault(); showViolation(+a.parentElement.dataset.violation); history.replaceState(null, "", a.getAttribute("href")); });
  }

  // The legend, built from the same colours the canvas uses.
  const legend = document.getElementById("legend");
  const swatch = (color, text) => {
    const s = document.createElement("span"), i = document.createElement("i");
    i.style.background = color; s.appendChild(i); s.appendChild(document.createTextNode(text)); legend.appendChild(s);
  };
  OUTCOME.forEach((c, i) => swatch(c, OUTCOME_NAME[i]));
  for (const k of ["partition", "clog", "down", "paused", "failpoint"]) swatch(SPAN[k], k);
  for (const k of ["leader", "compaction", "snapshot", "violation"]) swatch(MARK[k], k);
  // The Kubernetes marks, only where a run has informers.
  if (lanes.some((l) => l.kind === "informer")) {
    swatch(TICK[6], "list"); swatch(TICK[7], "relist");
    for (const [k, text] of [["expired", "410"], ["tombstone", "tombstone"], ["store-matches", "store = etcd"], ["store-differs", "store \u2260 etcd"]]) swatch(MARK[k], text);
  }

  window.addEventListener("resize", () => { resize(); draw(); });
  resize();
  draw();
  const hash = /^#v(\d+)$/.exec(location.hash);
  if (hash) showViolation(+hash[1]);
  body.dataset.lanes = String(lanes.length);
  body.dataset.bars = String(D.bars.lane.length);
  body.dataset.ticks = String(D.ticks.lane.length);
  body.dataset.kubeTicks = String(D.ticks.kind.filter((k) => k >= 4).length);
  body.dataset.informers = String(lanes.filter((l) => l.kind === "informer").length);
  body.dataset.violations = String(D.violations.length);
  body.dataset.rendered = "yes";
  body.dataset.renderedMs = performance.now().toFixed(1);
  // The frame after the first draw is the first paint of the timeline.
  requestAnimationFrame(() => { body.dataset.firstPaintMs = performance.now().toFixed(1); });
})();
