// GraphFuse dashboard: plain JavaScript and SVG, no build step, no network but this server.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const COLORS = { llm_only: "#9d755d", basic: "#4c78a8", graph: "#e45756" };
const LABELS = { llm_only: "LLM only", basic: "Basic RAG", graph: "GraphRAG" };
const EDGE_COLORS = { LINKS_TO: "#4c78a8", MENTIONS: "#f58518", CO_MENTION: "#54a24b", PART_OF: "#b279a2", OTHER: "#9d9d9d" };
const JUDGE_AXES = ["correctness", "completeness", "clarity", "relevance"];
const TOP_K = 5;
const BUDGET = 2000;

const state = { key: sessionStorage.getItem("graphfuse-key") || "", basic: "minimal", graph: "multihop" };

function $(id) { return document.getElementById(id); }

function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function svgEl(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

async function api(method, path, body) {
  const headers = { "content-type": "application/json" };
  if (state.key) headers.authorization = "Bearer " + state.key;
  const started = performance.now();
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  return { status: response.status, ok: response.ok, data, ms: performance.now() - started };
}

function showError(text) {
  const p = $("error");
  p.textContent = text || "";
  p.hidden = !text;
}

// -- start-up --------------------------------------------------------------------------------

async function start() {
  $("key-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    state.key = $("key").value.trim();
    sessionStorage.setItem("graphfuse-key", state.key);
    loadSamples();
  });
  $("question-form").addEventListener("submit", (ev) => { ev.preventDefault(); ask($("question").value); });
  const health = await api("GET", "/health");
  if (health.ok) {
    showHealth(health.data);
    if (health.data.auth === "api-keys") $("key-form").hidden = false;
  } else {
    $("status").textContent = "server unreachable";
  }
  drawTokens(null);
  drawJudge(null);
  drawLatency(null, null, null);
  loadSamples();
}

// While the server warms up (model, token counter, presets), say so and look again every second.
function showHealth(data) {
  state.health = data;
  renderStatus();
  if (data.ready === false) {
    setTimeout(async () => {
      const again = await api("GET", "/health");
      if (again.ok) showHealth(again.data);
    }, 1000);
  }
}

function renderStatus() {
  const data = state.health;
  if (!data) return;
  const where = data.components.store ? ` · ${data.components.store}` : "";
  const warming = data.ready === false ? ` · warming up (${(data.warming || []).join(", ")}): the first question waits for it` : "";
  const tenant = state.tenant ? ` · tenant ${state.tenant}` : "";
  $("status").textContent = `v${data.version} · ${data.status}${where}${tenant}${warming}`;
}

async function loadSamples() {
  const r = await api("GET", "/v1/samples");
  const box = $("samples");
  box.replaceChildren();
  if (r.status === 401) { showError("This server needs an API key: enter it above."); $("key-form").hidden = false; return; }
  if (!r.ok) { showError(r.data && r.data.detail || "cannot load sample questions"); return; }
  showError("");
  const presets = r.data.presets || [];
  state.basic = presets.includes("minimal") ? "minimal" : r.data.default_preset;
  state.graph = presets.includes("multihop") ? "multihop" : r.data.default_preset;
  $("basic-name").textContent = `preset ${state.basic}`;
  $("graph-name").textContent = `preset ${state.graph}`;
  $("basic-sources-name").textContent = `basic RAG (${state.basic})`;
  $("graph-sources-name").textContent = `GraphRAG (${state.graph})`;
  state.tenant = r.data.tenant || null;
  renderStatus();
  for (const q of (r.data.questions || []).slice(0, 8)) {
    const b = el("button", { type: "button", class: "sample" }, q);
    b.addEventListener("click", () => { $("question").value = q; ask(q); });
    box.appendChild(b);
  }
}

// -- one question ----------------------------------------------------------------------------

async function ask(question) {
  question = (question || "").trim();
  if (!question) return;
  showError("");
  $("ask-button").disabled = true;
  document.body.dataset.state = "loading";
  const began = performance.now();
  $("progress").hidden = false;
  $("progress-text").textContent = "retrieving, assembling contexts and answering…";
  const tick = setInterval(() => {
    $("progress-text").textContent = `retrieving, assembling contexts and answering… ${((performance.now() - began) / 1000).toFixed(0)} s`;
  }, 500);
  try {
    const [basic, graph, basicCtx, graphCtx, compare] = await Promise.all([
      api("POST", "/v1/retrieve", { query: question, top_k: TOP_K, preset: state.basic }),
      api("POST", "/v1/retrieve", { query: question, top_k: TOP_K, preset: state.graph, graph: true }),
      api("POST", "/v1/context", { query: question, budget: BUDGET, format: "passages", preset: state.basic, top_k: TOP_K }),
      api("POST", "/v1/context", { query: question, budget: BUDGET, format: "graph", preset: state.graph, top_k: TOP_K }),
      api("POST", "/v1/compare", { question: question, budget: BUDGET }),
    ]);
    for (const r of [basic, graph]) {
      if (!r.ok) throw new Error((r.data && (r.data.detail || r.data.title)) || `HTTP ${r.status}`);
    }
    drawSources($("basic-sources"), basic.data.results);
    drawSources($("graph-sources"), graph.data.results);
    drawGraph(graph.data.graph);
    drawAnswers(compare);
    drawTokens(tokensFrom(question, basicCtx, graphCtx, compare));
    drawJudge(compare.ok ? compare.data : null, compare);
    drawContext($("basic-context"), basicCtx);
    drawContext($("graph-context"), graphCtx);
    drawLatency(
      { basic: basic.data.took_ms, graph: graph.data.took_ms },
      { basic: basicCtx.ok ? basicCtx.data.took_ms : null, graph: graphCtx.ok ? graphCtx.data.took_ms : null },
      compare.ok ? compare.data : null,
    );
    document.body.dataset.state = "done";
  } catch (e) {
    showError(String(e.message || e));
    document.body.dataset.state = "error";
  } finally {
    clearInterval(tick);
    $("progress").hidden = true;
    $("ask-button").disabled = false;
  }
}

function noLlm(compare) {
  return !compare.ok && compare.status !== 401;
}

function drawAnswers(compare) {
  for (const panel of document.querySelectorAll(".answer")) {
    const box = panel.querySelector(".answer-text");
    const name = panel.dataset.pipeline;
    box.classList.remove("muted");
    if (compare.ok && compare.data.answers && compare.data.answers[name]) {
      const a = compare.data.answers[name];
      box.textContent = a.text;
      box.title = `${a.prompt_tokens} prompt + ${a.completion_tokens} completion tokens, ${(a.latency_s * 1000).toFixed(0)} ms`;
    } else if (noLlm(compare)) {
      box.classList.add("muted");
      box.textContent = compare.status === 404 || compare.status === 503
        ? "No LLM is configured on this server, so there is no generated answer. Retrieval, context and graph panels work without one."
        : `No answer: ${(compare.data && compare.data.detail) || "HTTP " + compare.status}`;
    }
  }
}

// -- sources -----------------------------------------------------------------------------------

function drawSources(list, results) {
  list.replaceChildren();
  if (!results.length) { list.appendChild(el("li", { class: "muted" }, "no results")); return; }
  for (const r of results) {
    const li = el("li", { class: "source" });
    li.appendChild(el("span", { class: "title" }, r.title || r.id));
    const scoreHelp = "score in [0, 1]: how well this result matches, among this question's results";
    li.appendChild(el("span", { class: "score", title: scoreHelp }, r.score.toFixed(3)));
    const sig = el("div", { class: "signals" });
    for (const [name, value] of Object.entries(r.signals)) {
      const s = el("span", { class: "signal", title: `${name} ${value.toFixed(3)}` }, `${name} ${value.toFixed(2)}`);
      s.appendChild(el("span", { class: "signal-bar", style: `width:${Math.round(value * 40)}px` }));
      sig.appendChild(s);
    }
    li.appendChild(sig);
    list.appendChild(li);
  }
}

// -- contexts ------------------------------------------------------------------------------------

function drawContext(box, r) {
  const pre = box.querySelector(".context-text");
  const meta = box.querySelector(".context-meta");
  if (!r.ok) {
    pre.textContent = (r.data && r.data.detail) || `no context: HTTP ${r.status}`;
    pre.classList.add("muted");
    meta.textContent = "";
    return;
  }
  pre.classList.remove("muted");
  pre.textContent = r.data.text;
  meta.textContent = `(${r.data.format}, ${r.data.tokens} of ${r.data.budget} tokens, ${r.data.counter})`;
}

// -- charts --------------------------------------------------------------------------------------

function tokensFrom(question, basicCtx, graphCtx, compare) {
  if (compare.ok && compare.data.answers) {
    const out = {};
    for (const name of Object.keys(LABELS)) {
      const a = compare.data.answers[name];
      if (a) out[name] = a.prompt_tokens;
    }
    return { values: out, what: "prompt tokens sent to the LLM" };
  }
  if (basicCtx.ok && graphCtx.ok) {
    return {
      values: { llm_only: 0, basic: basicCtx.data.tokens, graph: graphCtx.data.tokens },
      what: `context tokens (${basicCtx.data.counter}; budget ${BUDGET}); LLM only sends no context`,
    };
  }
  return { values: null, what: "the context endpoint is not available on this server" };
}

function drawTokens(data) {
  const box = $("tokens-chart");
  const W = 360, H = 200, left = 90, right = 50;
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "token bar chart", id: "tokens-svg" });
  const names = Object.keys(LABELS);
  const values = data && data.values ? data.values : null;
  const max = values ? Math.max(1, ...names.map((n) => values[n] || 0)) : 1;
  names.forEach((name, i) => {
    const y = 20 + i * 55;
    svg.appendChild(svgEl("text", { x: 0, y: y + 22 }, LABELS[name]));
    const v = values ? values[name] || 0 : 0;
    const w = values ? Math.max(1, ((W - left - right) * v) / max) : 0;
    svg.appendChild(svgEl("rect", { x: left, y, width: w, height: 32, fill: COLORS[name], class: "bar", "data-value": v }));
    svg.appendChild(svgEl("text", { x: left + w + 5, y: y + 22 }, values ? String(v) : ""));
  });
  box.replaceChildren(svg);
  $("tokens-note").textContent = data ? data.what : "ask a question";
}

function drawJudge(report, compare) {
  const box = $("judge-chart");
  const W = 320, H = 240, cx = W / 2, cy = H / 2 + 5, R = 85;
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "judge radar chart", id: "judge-svg" });
  const n = JUDGE_AXES.length;
  const point = (i, frac) => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / n;
    return [cx + Math.cos(a) * R * frac, cy + Math.sin(a) * R * frac];
  };
  for (const ring of [0.25, 0.5, 0.75, 1]) {
    const pts = JUDGE_AXES.map((_, i) => point(i, ring).join(",")).join(" ");
    svg.appendChild(svgEl("polygon", { points: pts, fill: "none", stroke: "#d9dde5", class: "ring" }));
  }
  JUDGE_AXES.forEach((axis, i) => {
    const [x, y] = point(i, 1);
    svg.appendChild(svgEl("line", { x1: cx, y1: cy, x2: x, y2: y, stroke: "#d9dde5", class: "axis" }));
    const [lx, ly] = point(i, 1.18);
    svg.appendChild(svgEl("text", { x: lx, y: ly + 4, "text-anchor": "middle" }, axis));
  });
  let drawn = 0;
  const verdicts = report && report.verdicts ? report.verdicts : {};
  for (const name of Object.keys(LABELS)) {
    const v = verdicts[name];
    if (!v) continue;
    const pts = JUDGE_AXES.map((axis, i) => point(i, Math.max(0, Math.min(1, (v[axis] || 0) / 10))).join(",")).join(" ");
    svg.appendChild(svgEl("polygon", { points: pts, fill: COLORS[name], "fill-opacity": 0.2, stroke: COLORS[name], class: "verdict" }));
    drawn++;
  }
  box.replaceChildren(svg);
  $("judge-note").textContent = drawn
    ? "judge scores out of 10 (blind, shuffled order)"
    : compare && noLlm(compare) ? "no judge: no LLM is configured on this server" : "ask a question";
}

function drawLatency(retrieval, context, report) {
  const box = $("latency-chart");
  const rows = [];
  if (retrieval) {
    rows.push(["basic", "retrieval", retrieval.basic]);
    rows.push(["graph", "retrieval", retrieval.graph]);
  }
  if (context) {
    if (typeof context.basic === "number") rows.push(["basic", "context", context.basic]);
    if (typeof context.graph === "number") rows.push(["graph", "context", context.graph]);
  }
  if (report && report.answers) {
    for (const name of Object.keys(LABELS)) {
      const a = report.answers[name];
      if (a && typeof a.latency_s === "number") rows.push([name, "answer", a.latency_s * 1000]);
    }
  }
  // Wide enough for the longest label and value: nothing is cut.
  const left = 150, right = 90, W = 420, H = Math.max(60, 14 + rows.length * 32);
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "latency chart", id: "latency-svg" });
  const max = Math.max(1, ...rows.map((r) => r[2]));
  rows.forEach(([name, what, ms], i) => {
    const y = 8 + i * 32;
    svg.appendChild(svgEl("text", { x: 0, y: y + 16, "font-size": 12, class: "latency-label" }, `${LABELS[name]} ${what}`));
    const w = Math.max(1, ((W - left - right) * ms) / max);
    svg.appendChild(svgEl("rect", { x: left, y, width: w, height: 22, fill: COLORS[name], class: "bar", "data-what": what }));
    svg.appendChild(svgEl("text", { x: left + w + 5, y: y + 16, "font-size": 12 }, ms >= 10000 ? `${(ms / 1000).toFixed(1)} s` : `${ms.toFixed(1)} ms`));
  });
  box.replaceChildren(svg);
  $("latency-note").textContent = rows.length
    ? "server-side time per request: retrieval = /v1/retrieve (the ranked results); context = /v1/context (retrieval again, then assembling the context within the budget); answer = retrieval and generation of /v1/compare"
    : "ask a question";
}

// -- subgraph --------------------------------------------------------------------------------------

function layout(nodes, edges, W, H) {
  // A small deterministic force layout: start on a circle, then springs and repulsion.
  const n = nodes.length;
  const pos = nodes.map((_, i) => ({
    x: W / 2 + Math.cos((2 * Math.PI * i) / Math.max(1, n)) * W * 0.3,
    y: H / 2 + Math.sin((2 * Math.PI * i) / Math.max(1, n)) * H * 0.3,
  }));
  const index = new Map(nodes.map((node, i) => [node.id, i]));
  const links = edges.map((e) => [index.get(e.source), index.get(e.target)]).filter(([a, b]) => a !== undefined && b !== undefined);
  for (let step = 0; step < 300; step++) {
    const force = pos.map(() => ({ x: 0, y: 0 }));
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const dx = pos[i].x - pos[j].x, dy = pos[i].y - pos[j].y;
        const d2 = Math.max(dx * dx + dy * dy, 25);
        const f = 60000 / d2;
        const d = Math.sqrt(d2);
        force[i].x += (f * dx) / d; force[i].y += (f * dy) / d;
        force[j].x -= (f * dx) / d; force[j].y -= (f * dy) / d;
      }
    }
    for (const [a, b] of links) {
      const dx = pos[b].x - pos[a].x, dy = pos[b].y - pos[a].y;
      force[a].x += dx * 0.02; force[a].y += dy * 0.02;
      force[b].x -= dx * 0.02; force[b].y -= dy * 0.02;
    }
    for (let i = 0; i < n; i++) {
      force[i].x += (W / 2 - pos[i].x) * 0.004;
      force[i].y += (H / 2 - pos[i].y) * 0.004;
      pos[i].x = Math.min(W - 60, Math.max(60, pos[i].x + Math.max(-10, Math.min(10, force[i].x))));
      pos[i].y = Math.min(H - 25, Math.max(25, pos[i].y + Math.max(-10, Math.min(10, force[i].y))));
    }
  }
  return pos;
}

function drawGraph(graph) {
  const box = $("graph");
  const W = 1000, H = 460;
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "retrieved subgraph", id: "graph-svg" });
  if (!graph || !graph.nodes.length) {
    box.replaceChildren(svg);
    $("graph-note").textContent = "no results";
    return;
  }
  const pos = layout(graph.nodes, graph.edges, W, H);
  const index = new Map(graph.nodes.map((node, i) => [node.id, i]));
  const types = new Set();
  for (const e of graph.edges) {
    const a = pos[index.get(e.source)], b = pos[index.get(e.target)];
    if (!a || !b) continue;
    types.add(e.type);
    const line = svgEl("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, stroke: EDGE_COLORS[e.type] || "#999", "stroke-width": 2, class: "edge", "data-type": e.type });
    // A relation between the pages of two passages names the pages.
    const between = e.pages ? ` (pages ${e.pages[0]} → ${e.pages[1]})` : "";
    line.appendChild(svgEl("title", {}, `${e.type}: ${e.source} → ${e.target}${between}`));
    svg.appendChild(line);
  }
  const maxScore = Math.max(1e-9, ...graph.nodes.map((x) => x.score));
  graph.nodes.forEach((node, i) => {
    const g = svgEl("g", { class: "node", "data-id": node.id });
    const r = 8 + 12 * (node.score / maxScore);
    g.appendChild(svgEl("circle", { cx: pos[i].x, cy: pos[i].y, r, fill: COLORS.graph, "fill-opacity": 0.85, stroke: "#fff" }));
    // The whole title; on the right half it is written to the left of its node, so it stays inside.
    const right = pos[i].x > W / 2;
    const label = svgEl("text", { x: right ? pos[i].x - r - 3 : pos[i].x + r + 3, y: pos[i].y + 4, "text-anchor": right ? "end" : "start", class: "node-label" }, `${node.rank}. ${node.title || node.id}`);
    g.appendChild(label);
    g.appendChild(svgEl("title", {}, `${node.title || node.id} (score ${node.score.toFixed(3)})`));
    svg.appendChild(g);
  });
  box.replaceChildren(svg);
  const legend = [...types].map((t) => t).join(", ");
  const pages = new Set(graph.nodes.filter((x) => x.page).map((x) => x.page));
  const what = pages.size ? `${graph.nodes.length} passages of ${pages.size} pages` : `${graph.nodes.length} documents`;
  $("graph-note").textContent = `${what}, ${graph.edges.length} relations` + (legend ? ` (${legend})` : " among them") + (graph.note ? ` · ${graph.note}` : "");
}

start();
