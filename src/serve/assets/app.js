"use strict";
// The playground's page: the editor (highlighting, errors as you type), the step
// controls, the planes of both runs, the selected PE and the exercises. Every request
// carries the whole program; the server keeps nothing between requests.

const DATA = JSON.parse(document.getElementById("page-data").textContent);
const $ = (id) => document.getElementById(id);
const MACROS = new Map(DATA.macros.map((m) => [m.name, m.summary]));
const REGISTER = /^(?:[A-F]|NEWS|T|PIX|IN|X[NESW]|R(?:1[0-2]|[0-9])|FLAG)$/;
const DIRECTION = /^(?:north|east|south|west)$/;
const VIEW_PX = 368;

const st = {
  steps: [], step: 0, pe: [128, 128], reg: "A", zoom: "fit", reply: null,
  errors: [], inputsEdited: false, parseSeq: 0, runSeq: 0, busy: 0, exercise: "", ranProgram: null,
};

function busy(d) {
  st.busy += d;
  $("busy").dataset.busy = String(st.busy);
}

async function post(path, body) {
  busy(1);
  try {
    const r = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body) });
    const v = await r.json();
    if (!r.ok) throw new Error(v.error || r.statusText);
    return v;
  } finally {
    busy(-1);
  }
}

function esc(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
}

// ---- editor --------------------------------------------------------------------------

function tokenHtml(line) {
  const cut = line.indexOf("//");
  const code = cut < 0 ? line : line.slice(0, cut);
  const comment = cut < 0 ? "" : line.slice(cut);
  let out = code.replace(/[A-Za-z_][A-Za-z0-9_]*|-?\d+(?:\.\d+)?|[^A-Za-z_\d]+/g, (t) => {
    if (MACROS.has(t)) return `<span class="mac" title="${esc(MACROS.get(t))}">${esc(t)}</span>`;
    if (REGISTER.test(t)) return `<span class="reg">${t}</span>`;
    if (DIRECTION.test(t)) return `<span class="dir">${t}</span>`;
    if (/^-?\d/.test(t)) return `<span class="num">${t}</span>`;
    return esc(t);
  });
  if (comment) out += `<span class="cm">${esc(comment)}</span>`;
  return out;
}

function errorLineHtml(line, col) {
  // The token that starts at the error's column is underlined.
  const i = Math.max(0, Math.min(line.length, col - 1));
  const m = /^[A-Za-z_0-9.]+|^./.exec(line.slice(i));
  const j = i + (m ? m[0].length : 0);
  return esc(line.slice(0, i)) + `<span class="tok-err">${esc(line.slice(i, j)) || " "}</span>` + esc(line.slice(j));
}

function currentLine() {
  const s = st.steps[st.step - 1];
  return s ? s.line : 0;
}

function render() {
  const lines = $("editor").value.split("\n");
  const err = st.errors[0];
  const cur = currentLine();
  const bp = Number($("bp-line").value) || 0;
  $("highlight").innerHTML = lines.map((l, k) => {
    const n = k + 1;
    if (err && err.line === n) return `<span class="line-err">${errorLineHtml(l, err.col)}</span>`;
    const html = tokenHtml(l);
    return n === cur ? `<span class="line-cur">${html}</span>` : html;
  }).join("\n") + "\n";
  $("gutter").innerHTML = lines.map((_, k) => {
    const n = k + 1;
    const cls = [err && err.line === n ? "err" : "", n === bp ? "bp" : "", n === cur ? "cur" : ""].join(" ").trim();
    return `<div data-line="${n}" class="${cls}">${n}</div>`;
  }).join("");
  placeBubble();
}

function placeBubble() {
  const b = $("error-bubble");
  const err = st.errors[0];
  if (!err) { b.hidden = true; return; }
  const ed = $("editor");
  const lh = parseFloat(getComputedStyle(ed).lineHeight);
  const cw = charWidth();
  const line = Math.max(1, err.line);
  b.textContent = `${err.line}:${err.col}: ${err.msg}`;
  b.dataset.line = String(err.line);
  b.dataset.col = String(err.col);
  b.style.top = `${6 + line * lh - ed.scrollTop + 1}px`;
  b.style.left = `${Math.max(0, 6 + (Math.max(1, err.col) - 1) * cw - ed.scrollLeft)}px`;
  b.hidden = false;
}

let cw = 0;
function charWidth() {
  if (cw) return cw;
  const s = document.createElement("span");
  s.style.font = getComputedStyle($("editor")).font;
  s.style.position = "absolute";
  s.style.visibility = "hidden";
  s.textContent = "0".repeat(50);
  document.body.appendChild(s);
  cw = s.getBoundingClientRect().width / 50;
  s.remove();
  return cw;
}

function syncScroll() {
  const ed = $("editor");
  $("highlight").scrollTop = ed.scrollTop;
  $("highlight").scrollLeft = ed.scrollLeft;
  $("gutter").scrollTop = ed.scrollTop;
  placeBubble();
}

// `// given: A = col, B = 1000` lines fill the inputs until the user types there.
function givenInputs(text) {
  return text.split("\n").map((l) => /^\s*\/\/\s*given:(.*)$/.exec(l)).filter(Boolean)
    .map((m) => m[1].trim()).join(", ");
}

function setStatus(msg, bad) {
  $("status").textContent = msg;
  $("status").className = bad ? "bad" : "";
}

let parseTimer = 0;
function onEdit() {
  if (!st.inputsEdited) $("inputs").value = givenInputs($("editor").value);
  render();
  clearTimeout(parseTimer);
  parseTimer = setTimeout(checkSyntax, 200);
}

async function checkSyntax() {
  const seq = ++st.parseSeq;
  try {
    const r = await post("/api/parse", { program: $("editor").value });
    if (seq !== st.parseSeq) return;
    st.errors = r.errors;
    if (r.errors.length) setStatus(`error at line ${r.errors[0].line}, column ${r.errors[0].col}`, true);
    else {
      setStatus(`${r.instructions} macros, ${r.cycles} bus instructions`, false);
      // Keep the planes in step with the text: rerun what was shown, at the same step.
      if (st.reply) runTo(Math.min(st.step, r.instructions));
    }
  } catch (e) {
    if (seq === st.parseSeq) setStatus(String(e.message), true);
  }
  render();
}

// ---- running -------------------------------------------------------------------------

async function runTo(step) {
  const seq = ++st.runSeq;
  const body = {
    program: $("editor").value, inputs: $("inputs").value, image: $("image").value,
    noise: $("noise").value, pe: st.pe,
  };
  if (step !== null) body.step = Math.max(0, step);
  try {
    const r = await post("/api/run", body);
    if (seq !== st.runSeq) return;
    // A new program opens on the register it wrote last (its result), not on A.
    if (body.program !== st.ranProgram) {
      st.ranProgram = body.program;
      const last = lastWritten(r.steps);
      if (last) st.reg = last;
    }
    st.reply = r;
    st.errors = r.errors;
    st.steps = r.steps;
    st.step = r.step;
    const msg = r.errors.length ? `error at line ${r.errors[0].line}, column ${r.errors[0].col}`
      : `${r.instructions} macros, ${r.cycles} bus instructions`;
    setStatus(msg, r.errors.length > 0);
    showRun();
  } catch (e) {
    if (seq === st.runSeq) setStatus(String(e.message), true);
  }
  render();
}

/** The register the last writing step wrote (NEWS only when nothing else is). */
function lastWritten(steps) {
  for (let i = steps.length - 1; i >= 0; i--) {
    const w = steps[i].writes.filter((n) => n !== "NEWS");
    if (w.length) return w[0];
  }
  return null;
}

function showRun() {
  const r = st.reply;
  const s = $("slider");
  s.max = String(st.steps.length);
  s.value = String(st.step);
  const cur = st.steps[st.step - 1];
  $("where").innerHTML = cur
    ? `step <b>${st.step}</b> of ${st.steps.length}: line ${cur.line}: <code>${esc(cur.text)}</code> (${cur.cycles} bus instructions so far)`
    : `step 0 of ${st.steps.length}: before the first macro`;
  $("ops").innerHTML = cur ? cur.ops.map((o) => `<li>${esc(o)}</li>`).join("") : "";
  $("access").innerHTML = cur
    ? `reads ${cur.reads.map((x) => `<span class="chip r">${esc(x)}</span>`).join("") || "nothing"}; ` +
      `writes ${cur.writes.map((x) => `<span class="chip w">${esc(x)}</span>`).join("") || "nothing"}` +
      (cur.arrows.length ? `; neighbour transfers ${cur.arrows.map((a) => (a.inward ? "from " : "to ") + a.dir).join(", ")}` : "")
    : "";
  const notes = [];
  if (r.truncated) notes.push(r.truncated);
  for (const w of r.warnings) notes.push("warning: " + w);
  $("notes").innerHTML = notes.map((n) => `<p>${esc(n)}</p>`).join("");
  showRegs();
  if (!r.runs.length) {
    // Nothing ran (the program has an error): no planes, no PE.
    for (const k of [0, 1]) {
      const fig = $(`view-${k}`);
      fig.querySelector("figcaption").textContent = "";
      fig.querySelector("canvas").getContext("2d").clearRect(0, 0, 256, 256);
      fig.querySelector("svg").innerHTML = "";
    }
    $("pe-table").innerHTML = "";
    $("legend").textContent = "";
    $("pe-name").textContent = "";
    return;
  }
  showPlanes();
  showPe();
}

function showRegs() {
  const r = st.reply;
  if (!r || !r.runs.length) { $("regs").innerHTML = ""; return; }
  const cur = st.steps[st.step - 1] || { reads: [], writes: [] };
  const names = r.runs[0].planes.map((p) => p.name);
  if (!names.includes(st.reg)) st.reg = names[0];
  $("regs").innerHTML = names.map((n) => {
    const cls = [n === st.reg ? "on" : "", cur.reads.includes(n) ? "read" : "", cur.writes.includes(n) ? "written" : ""].join(" ").trim();
    return `<button class="${cls}" data-reg="${esc(n)}" role="tab">${esc(n)}</button>`;
  }).join("");
}

function zoomOf() {
  return st.zoom === "fit" ? VIEW_PX / 256 : Number(st.zoom);
}

// Where the 256x256 canvas sits in the viewport: centred on the selected PE when zoomed
// in past the viewport, else centred.
function offsetOf(z) {
  const size = 256 * z;
  if (size <= VIEW_PX) return [(VIEW_PX - size) / 2, (VIEW_PX - size) / 2];
  const clamp = (v) => Math.min(0, Math.max(VIEW_PX - size, v));
  return [clamp(VIEW_PX / 2 - (st.pe[1] + 0.5) * z), clamp(VIEW_PX / 2 - (st.pe[0] + 0.5) * z)];
}

function decode(b64) {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function showPlanes() {
  const r = st.reply;
  const z = zoomOf();
  const [ox, oy] = offsetOf(z);
  const cur = st.steps[st.step - 1] || { arrows: [] };
  r.runs.forEach((run, k) => {
    const fig = $(`view-${k}`);
    const plane = run.planes.find((p) => p.name === st.reg);
    fig.querySelector("figcaption").textContent = `${run.name}: ${st.reg}` +
      (run.saturated ? ` (${run.saturated} clipped)` : "");
    const c = fig.querySelector("canvas");
    const ctx = c.getContext("2d");
    const img = ctx.createImageData(256, 256);
    const bytes = plane && plane.data ? decode(plane.data) : null;
    for (let i = 0; i < 65536; i++) {
      const v = bytes ? bytes[i] : 128;
      img.data[4 * i] = v; img.data[4 * i + 1] = v; img.data[4 * i + 2] = v; img.data[4 * i + 3] = 255;
    }
    ctx.putImageData(img, 0, 0);
    c.style.width = c.style.height = `${256 * z}px`;
    c.style.left = `${ox}px`;
    c.style.top = `${oy}px`;
    drawOverlay(fig.querySelector("svg"), z, ox, oy, cur.arrows);
  });
  const p = r.runs[0].planes.find((q) => q.name === st.reg);
  if (p) {
    $("legend").textContent = p.data ? `black ${fmt(p.lo)} .. white ${fmt(p.hi)}` : `uniform ${fmt(p.lo)}`;
  }
}

const STEP = { north: [0, -1], east: [1, 0], south: [0, 1], west: [-1, 0] };

function drawOverlay(svg, z, ox, oy, arrows) {
  const cx = ox + (st.pe[1] + 0.5) * z;
  const cy = oy + (st.pe[0] + 0.5) * z;
  const box = Math.max(z, 7);
  const len = Math.max(2 * z, 30);
  let s = `<defs><marker id="${svg.parentNode.parentNode.id}-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="#ffb000"/></marker></defs>`;
  s += `<rect x="${cx - box / 2}" y="${cy - box / 2}" width="${box}" height="${box}" fill="none" stroke="#ffb000" stroke-width="2"/>`;
  for (const a of arrows) {
    const [dx, dy] = STEP[a.dir];
    const far = [cx + dx * len, cy + dy * len];
    const [x1, y1, x2, y2] = a.inward ? [far[0], far[1], cx + dx * box / 2, cy + dy * box / 2]
      : [cx + dx * box / 2, cy + dy * box / 2, far[0], far[1]];
    s += `<line class="arrow" data-dir="${a.dir}" data-inward="${a.inward}" x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="#ffb000" stroke-width="3" marker-end="url(#${svg.parentNode.parentNode.id}-head)"/>`;
  }
  svg.innerHTML = s;
}

function fmt(v) {
  const s = Number(v).toFixed(3).replace(/\.?0+$/, "");
  return s === "-0" ? "0" : s;
}

function showPe() {
  const r = st.reply;
  $("pe-name").textContent = `PE (${st.pe[0]}, ${st.pe[1]}): click a plane to pick another`;
  const cur = st.steps[st.step - 1] || { reads: [], writes: [] };
  const [ideal, noisy] = r.runs;
  const me = ideal.pe[0];
  const nb = ideal.pe.slice(1);
  let h = `<tr><th>reg</th><th>${esc(ideal.name)}</th><th>${esc(noisy.name)}</th>` +
    nb.map((n) => `<th title="${n.row === null ? "beyond the edge" : `PE (${n.row}, ${n.col}): ideal, then noisy`}">${n.dir}</th>`).join("") + "</tr>";
  me.values.forEach((v, i) => {
    const cls = cur.writes.includes(v.name) ? "written" : cur.reads.includes(v.name) ? "read" : "";
    h += `<tr class="${cls}" data-reg="${esc(v.name)}"><td>${esc(v.name)}</td><td>${fmt(v.value)}</td><td>${fmt(noisy.pe[0].values[i].value)}</td>` +
      nb.map((n, k) => {
        const far = noisy.pe[k + 1];
        return n.values.length
          ? `<td><span class="ideal">${fmt(n.values[i].value)}</span><span class="noisy">${fmt(far.values[i].value)}</span></td>`
          : "<td>-</td>";
      }).join("") + "</tr>";
  });
  $("pe-table").innerHTML = h;
}

// ---- exercises -----------------------------------------------------------------------

function grid(g, which) {
  const rows = which === "expected" ? g.expected : g.computed;
  let h = `<table class="kgrid ${which}"><caption>${esc(g.register)} ${which}</caption>`;
  rows.forEach((row, i) => {
    h += "<tr>" + row.map((v, j) => {
      const other = (which === "expected" ? g.computed : g.expected)[i][j];
      const cls = [g.rows[0] + i === 0 && g.cols[0] + j === 0 ? "centre" : "", v !== other ? "diff" : ""].join(" ").trim();
      return `<td class="${cls}" title="offset (row ${g.rows[0] + i}, col ${g.cols[0] + j})">${esc(v)}</td>`;
    }).join("") + "</tr>";
  });
  return h + "</table>";
}

async function grade() {
  $("grade-result").innerHTML = "grading...";
  try {
    const r = await post("/api/grade", { exercise: st.exercise, program: $("editor").value });
    if (r.errors.length) {
      st.errors = r.errors;
      render();
      $("grade-result").innerHTML = `<p class="verdict fail">not graded: line ${r.errors[0].line}: ${esc(r.errors[0].msg)}</p>`;
      return;
    }
    let h = r.verified
      ? `<p class="verdict ok">proof exact: the program computes the kernel for every image.</p>`
      : `<p class="verdict fail">proof failed: expected against computed, the offsets that differ marked.</p>`;
    for (const g of r.grids) h += `<div class="grids">${grid(g, "expected")}${grid(g, "computed")}</div>`;
    const notes = r.notes.concat(...r.grids.map((g) => g.notes));
    if (notes.length) h += `<pre>${esc(notes.join("\n"))}</pre>`;
    if (r.verified) {
      h += `<p>${r.instructions} macros, ${r.cycles} bus instructions; ${esc(r.noise)} on ${r.images} images, a border of ${r.border} px left out.</p>`;
      h += `<table class="figs"><tr><th>out</th><th>d</th><th>error</th><th>RMSE</th><th>max |e|</th><th>bias</th></tr>`;
      for (const k of r.kernels) {
        for (const [label, f] of [["approximation", k.approx], ["analogue", k.analogue], ["total", k.total]]) {
          h += `<tr><td>${esc(k.out)}</td><td>${k.depth}</td><td>${label}</td><td class="rmse">${f.rmse.toFixed(3)}</td><td>${f.max.toFixed(3)}</td><td>${f.bias.toFixed(3)}</td></tr>`;
        }
      }
      h += "</table>";
    }
    $("grade-result").innerHTML = h;
  } catch (e) {
    $("grade-result").innerHTML = `<p class="verdict fail">${esc(e.message)}</p>`;
  }
}

function openExercise(name) {
  st.exercise = name;
  $("grade-panel").hidden = !name;
  $("grade-result").innerHTML = "";
  $("grade-name").textContent = name;
  const ex = DATA.exercises.find((e) => e.name === name);
  if (ex) {
    $("editor").value = ex.starter;
    onEdit();
    // The exercise's input register holds the picture, as `scamp check` preloads it.
    const input = /^input:\s*([A-Z])\s*$/m.exec(ex.spec);
    $("inputs").value = input ? `${input[1]} = image` : "";
    st.inputsEdited = true;
    runTo(null);
  }
}

// ---- wiring --------------------------------------------------------------------------

function pickPe(ev) {
  const vp = ev.currentTarget;
  const rect = vp.getBoundingClientRect();
  const z = zoomOf();
  const [ox, oy] = offsetOf(z);
  const col = Math.floor((ev.clientX - rect.left - 1 - ox) / z);
  const row = Math.floor((ev.clientY - rect.top - 1 - oy) / z);
  if (row < 0 || row > 255 || col < 0 || col > 255) return;
  st.pe = [row, col];
  runTo(st.step);
}

function runToLine() {
  const line = Number($("bp-line").value);
  if (!line) return;
  // Stop before the next macro on that line (or the first after it).
  let k = st.steps.findIndex((s, i) => i >= st.step && s.line >= line);
  if (k < 0) k = st.steps.findIndex((s) => s.line >= line);
  runTo(k < 0 ? null : k);
}

function init() {
  for (const e of DATA.exercises) $("exercise").add(new Option(e.name, e.name));
  for (const n of DATA.images) $("image").add(new Option(n, n, n === "camera", n === "camera"));
  for (const n of DATA.noises) $("noise").add(new Option(n, n, n === "scamp5", n === "scamp5"));
  const ed = $("editor");
  ed.addEventListener("input", onEdit);
  ed.addEventListener("scroll", syncScroll);
  ed.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && e.ctrlKey) { e.preventDefault(); runTo(null); }
  });
  $("inputs").addEventListener("input", () => { st.inputsEdited = true; });
  $("inputs").addEventListener("change", () => runTo(st.step));
  $("run").addEventListener("click", () => runTo(null));
  $("step").addEventListener("click", () => runTo(st.step + 1));
  $("back").addEventListener("click", () => runTo(st.step - 1));
  $("run-to").addEventListener("click", runToLine);
  $("bp-line").addEventListener("change", render);
  $("slider").addEventListener("input", () => runTo(Number($("slider").value)));
  $("gutter").addEventListener("click", (e) => {
    const n = e.target.dataset && e.target.dataset.line;
    if (n) { $("bp-line").value = $("bp-line").value === n ? "" : n; render(); }
  });
  $("regs").addEventListener("click", (e) => {
    if (e.target.dataset.reg) { st.reg = e.target.dataset.reg; showRegs(); showPlanes(); }
  });
  $("zoom").addEventListener("change", () => { st.zoom = $("zoom").value; if (st.reply) showPlanes(); });
  for (const k of [0, 1]) $(`view-${k}`).querySelector(".viewport").addEventListener("click", pickPe);
  for (const id of ["image", "noise"]) $(id).addEventListener("change", () => runTo(st.step));
  $("exercise").addEventListener("change", () => openExercise($("exercise").value));
  $("grade").addEventListener("click", grade);
  $("share").addEventListener("click", () => {
    const link = `${location.origin}/?program=${encodeURIComponent(ed.value)}`;
    $("share-link").value = link;
    $("share-link").hidden = false;
    $("share-link").select();
    history.replaceState(null, "", `/?program=${encodeURIComponent(ed.value)}`);
  });
  const shared = new URLSearchParams(location.search).get("program");
  ed.value = shared !== null ? shared
    : "// given: A = col\nmovx(B, A, east);    // B = A of the east neighbour\nmovx(C, A, west);    // C = A of the west neighbour\n";
  onEdit();
  runTo(null);
}

init();
