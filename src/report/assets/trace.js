"use strict";
// Step-through viewer: decodes the embedded planes, draws them on canvases and follows
// the step chosen with the buttons, the slider, the arrow keys or #step=N.
const D = JSON.parse(document.getElementById("trace-data").textContent);
const S = D.side, B = D.n / S, NSTEPS = D.steps.length;
const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

function decode(frame) {
  if (typeof frame[1] === "number") return new Uint8Array(S * S).fill(frame[1]);
  const s = atob(frame[1]);
  const a = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) a[i] = s.charCodeAt(i);
  return a;
}

// Per run and plane: the decoded key frames, and the frame shown at a step.
for (const run of D.runs) {
  for (const group of ["planes", "diff", "bits"]) {
    for (const name in run[group]) {
      run[group][name] = run[group][name].map((f) => ({ step: f[0], data: decode(f) }));
    }
  }
}
function at(frames, step) {
  let lo = 0;
  for (let i = 0; i < frames.length && frames[i].step <= step; i++) lo = i;
  return frames[lo].data;
}

// Colour scales: grey for values (-128 black .. 127 white), blue-white-red for the
// noisy-minus-ideal difference over +-DIFF.
const grey = (q) => [q, q, q];
// The difference scale covers 99.5 % of all block differences over all steps, so a few
// saturated blocks do not wash out the rest.
const hist = new Array(256).fill(0);
for (const name of D.analogue) {
  for (const f of D.runs[1].diff[name]) {
    for (let i = 0; i < f.data.length; i += 3) hist[Math.min(255, Math.abs(f.data[i] - 128))]++;
  }
}
const total = hist.reduce((p, v) => p + v, 0);
let DIFF = 1;
for (let v = 0, acc = 0; v < 256; v++) {
  acc += hist[v];
  if (acc >= 0.995 * total) { DIFF = Math.max(1, v); break; }
}
const NICE = [1, 2, 4, 8, 16, 32, 64, 128, 256];
DIFF = NICE.find((v) => v >= DIFF);
function diverging(d) {
  const t = Math.max(-1, Math.min(1, d / DIFF));
  if (t < 0) return [Math.round(255 + t * 215), Math.round(255 + t * 150), 255];
  return [255, Math.round(255 - t * 190), Math.round(255 - t * 215)];
}

function draw(canvas, values, colour) {
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(S, S);
  for (let i = 0; i < S * S; i++) {
    const c = colour(values[i]);
    img.data[4 * i] = c[0];
    img.data[4 * i + 1] = c[1];
    img.data[4 * i + 2] = c[2];
    img.data[4 * i + 3] = 255;
  }
  ctx.putImageData(img, 0, 0);
  const pr = Math.floor(D.pe[0] / B), pc = Math.floor(D.pe[1] / B);
  ctx.strokeStyle = "#ffb000";
  ctx.lineWidth = 1;
  ctx.strokeRect(pc - 1.5, pr - 1.5, 4, 4);
}

function scaleBar(label, colour, lo, hi, ticks) {
  const box = el("div", "scale");
  box.appendChild(el("span", "scale-label", label));
  const c = el("canvas");
  c.width = 256;
  c.height = 12;
  const ctx = c.getContext("2d");
  for (let x = 0; x < 256; x++) {
    const rgb = colour(lo + ((hi - lo) * x) / 255);
    ctx.fillStyle = `rgb(${rgb[0]},${rgb[1]},${rgb[2]})`;
    ctx.fillRect(x, 0, 1, 12);
  }
  const wrap = el("span", "scale-bar");
  wrap.appendChild(c);
  const t = el("span", "ticks");
  for (const v of ticks) t.appendChild(el("span", "", String(v)));
  wrap.appendChild(t);
  box.appendChild(wrap);
  return box;
}
$("scale").appendChild(scaleBar("value", (v) => grey(v + 128), -128, 127, [-128, -64, 0, 64, 127]));
$("scale").appendChild(
  scaleBar(D.runs[1].name + " \u2212 ideal", diverging, -DIFF, DIFF, [-DIFF, -DIFF / 2, 0, DIFF / 2, DIFF])
);

// The plane grid: one row per run plus the difference row, one column per register.
const cells = [];
const grid = el("div", "plane-grid");
grid.style.gridTemplateColumns = `7em repeat(${D.analogue.length}, 1fr)`;
grid.appendChild(el("div"));
for (const name of D.analogue) grid.appendChild(el("div", "col-head", name));
const rows = [
  { label: "ideal", kind: 0 },
  { label: D.runs[1].name, kind: 1 },
  { label: D.runs[1].name + " \u2212 ideal", kind: 2 },
];
for (const row of rows) {
  grid.appendChild(el("div", "row-head", row.label));
  for (const name of D.analogue) {
    const c = el("canvas", "plane");
    c.width = S;
    c.height = S;
    c.dataset.reg = name;
    c.dataset.kind = row.kind;
    grid.appendChild(c);
    cells.push(c);
  }
}
$("runs").appendChild(grid);

const bitCells = [];
for (const run of D.runs) {
  const box = el("div", "bit-run");
  box.appendChild(el("div", "row-head", run.name));
  const line = el("div", "bit-row");
  for (const name of D.digital) {
    const frames = run.bits[name];
    const used = name === "FLAG" || frames.length > 1 || frames[0].data.some((v) => v !== 0);
    if (!used) continue;
    const fig = el("figure", "bit");
    const c = el("canvas", "mask");
    c.width = S;
    c.height = S;
    c.dataset.bit = name;
    c.dataset.run = D.runs.indexOf(run);
    fig.appendChild(c);
    fig.appendChild(el("figcaption", "", name));
    line.appendChild(fig);
    bitCells.push(c);
  }
  box.appendChild(line);
  $("bits").appendChild(box);
}

// Source listing and PE table.
const lines = D.lines.map((text, i) => {
  const li = el("li");
  li.appendChild(el("span", "ln", String(i + 1)));
  li.appendChild(el("code", "", text.length ? text : " "));
  $("source").appendChild(li);
  return li;
});
$("pe-name").textContent = `(${D.pe[0]}, ${D.pe[1]})`;
const fmt = (v) => (Math.abs(v) < 5e-4 ? "0" : v.toFixed(3).replace(/\.?0+$/, ""));

function value(c, step, br, bc) {
  const i = br * S + bc;
  const a = at(D.runs[0].planes[c.dataset.reg], step)[i] - 128;
  const b = at(D.runs[1].planes[c.dataset.reg], step)[i] - 128;
  const d = at(D.runs[1].diff[c.dataset.reg], step)[i] - 128;
  return [a, b, d][Number(c.dataset.kind)];
}

let step = 0;
function show(s) {
  step = Math.max(0, Math.min(NSTEPS, s | 0));
  const info = step > 0 ? D.steps[step - 1] : null;
  const written = info ? info[6] : [];
  let drawn = 0, nonblank = 0;
  for (const c of cells) {
    const k = Number(c.dataset.kind);
    const vals = k < 2 ? at(D.runs[k].planes[c.dataset.reg], step) : at(D.runs[1].diff[c.dataset.reg], step);
    draw(c, vals, k < 2 ? grey : (q) => diverging(q - 128));
    drawn++;
    if (vals.some((v) => v !== vals[0])) nonblank++;
    c.classList.toggle("written", written.includes(c.dataset.reg));
  }
  for (const c of bitCells) {
    const vals = at(D.runs[Number(c.dataset.run)].bits[c.dataset.bit], step);
    draw(c, vals, grey);
    c.classList.toggle("written", written.includes(c.dataset.bit));
  }
  lines.forEach((li) => li.classList.remove("current"));
  const exp = $("expansion");
  exp.textContent = "";
  if (info) {
    const li = lines[info[0] - 1];
    if (li) {
      li.classList.add("current");
      // Scroll the listing only, never the page the student is looking at.
      const box = $("source");
      if (li.offsetTop < box.scrollTop || li.offsetTop + li.offsetHeight > box.scrollTop + box.clientHeight) {
        box.scrollTop = li.offsetTop - box.clientHeight / 2;
      }
    }
    // The macro's bus instructions are the steps around this one from the same statement.
    const first = step - info[3];
    for (let j = 0; j < info[4]; j++) {
      const sj = D.steps[first - 1 + j];
      const item = el("li", j === info[3] ? "current" : j < info[3] ? "done" : "", sj ? sj[2] : "");
      exp.appendChild(item);
    }
  } else {
    exp.appendChild(el("li", "", "(start: the array before the first instruction)"));
  }
  const cyc = info ? info[5] : 0;
  const us = (cyc * 1e6) / D.clock_hz;
  $("where").textContent =
    `step ${step} / ${NSTEPS}` +
    (info ? ` \u00b7 line ${info[0]}: ${info[1]} \u00b7 ${info[2]}` : " \u00b7 start") +
    ` \u00b7 cycle ${cyc} \u00b7 ${us.toFixed(1)} \u00b5s`;
  const t = $("pe-table");
  t.textContent = "";
  const head = el("tr");
  for (const h of ["register", "ideal", D.runs[1].name, "difference"]) head.appendChild(el("th", "", h));
  t.appendChild(head);
  const pa = D.runs[0].pe[step], pb = D.runs[1].pe[step];
  D.pe_names.forEach((n, i) => {
    const tr = el("tr", written.includes(n) ? "written" : "");
    tr.appendChild(el("td", "", n));
    tr.appendChild(el("td", "num", fmt(pa[i])));
    tr.appendChild(el("td", "num", fmt(pb[i])));
    tr.appendChild(el("td", "num", fmt(pb[i] - pa[i])));
    t.appendChild(tr);
  });
  const news = D.pe_names.indexOf("NEWS");
  const cross = $("pe-cross");
  cross.textContent = "";
  const spots = { XN: "n", XW: "w", NEWS: "c", XE: "e", XS: "s" };
  for (const k in spots) {
    const i = k === "NEWS" ? news : D.pe_names.indexOf(k);
    const cell = el("div", "cross-" + spots[k]);
    cell.appendChild(el("small", "", k === "NEWS" ? "own NEWS" : k));
    cell.appendChild(el("span", "", fmt(pa[i])));
    cross.appendChild(cell);
  }
  $("slider").value = step;
  if (location.hash !== `#step=${step}`) history.replaceState(null, "", `#step=${step}`);
  const st = $("status");
  st.dataset.ready = "1";
  st.dataset.step = step;
  st.dataset.drawn = drawn;
  st.dataset.nonblank = nonblank;
  st.textContent = `drawn ${drawn} planes at step ${step}; ${nonblank} not uniform`;
}

const tip = $("tip");
document.addEventListener("mousemove", (e) => {
  const c = e.target;
  if (!(c instanceof HTMLCanvasElement) || !c.dataset.reg) {
    tip.hidden = true;
    return;
  }
  const r = c.getBoundingClientRect();
  const bc = Math.min(S - 1, Math.floor(((e.clientX - r.left) / r.width) * S));
  const br = Math.min(S - 1, Math.floor(((e.clientY - r.top) / r.height) * S));
  const v = value(c, step, br, bc);
  const what = ["ideal", D.runs[1].name, D.runs[1].name + " \u2212 ideal"][Number(c.dataset.kind)];
  tip.textContent = `${c.dataset.reg} (${what}) rows ${br * B}..${br * B + B - 1}, cols ${bc * B}..${bc * B + B - 1}: ${v}`;
  tip.style.left = e.pageX + 12 + "px";
  tip.style.top = e.pageY + 12 + "px";
  tip.hidden = false;
});

$("slider").max = NSTEPS;
$("slider").addEventListener("input", (e) => show(Number(e.target.value)));
$("first").onclick = () => show(0);
$("prev").onclick = () => show(step - 1);
$("next").onclick = () => show(step + 1);
$("last").onclick = () => show(NSTEPS);
document.addEventListener("keydown", (e) => {
  const moves = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
  if (e.key in moves) show(step + moves[e.key]);
  else if (e.key === "Home") show(0);
  else if (e.key === "End") show(NSTEPS);
  else return;
  e.preventDefault();
});
$("warnings").textContent = D.warnings.length ? "Warnings: " + D.warnings.join("; ") : "";
const fromHash = () => {
  const m = /step=(\d+)/.exec(location.hash);
  return m ? Number(m[1]) : 0;
};
window.addEventListener("hashchange", () => show(fromHash()));
show(fromHash());
