// The fembench-agents run viewer: no dependencies, no network. The index
// arrives through data/index.js, each episode through data/episodes/<n>.js
// when it is opened (script files, so the site also works from file://).
// Every text is added as a text node, never as HTML: replies are model output.
// The side-by-side comparison is compare.js.
"use strict";

const PAGE_SIZE = 100;
const FILTER_KEYS = ["model", "agent", "track", "task", "status", "stage", "domain", "tier", "knowledge"];
const state = { index: null, rows: [], page: 0, lastIndexHash: "#/" };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined) node.setAttribute(k, v);
  }
  for (const c of children) node.append(c === null || c === undefined ? "" : c);
  return node;
}

function fmt(value, digits) {
  if (value === null || value === undefined) return "-";
  if (typeof value === "number" && digits !== undefined) return value.toFixed(digits);
  return String(value);
}

// ------------------------------------------------------------ routing

function parseHash() {
  const hash = location.hash || "#/";
  const m = hash.match(/^#\/episode\/(\d+)/);
  if (m) return { view: "episode", n: Number(m[1]) };
  const c = hash.match(/^#\/compare(?:\?(.*))?$/);
  if (c) return { view: "compare", params: parseCompareParams(c[1]) };
  const q = hash.indexOf("?");
  const params = new URLSearchParams(q >= 0 ? hash.slice(q + 1) : "");
  const filters = {};
  for (const key of [...FILTER_KEYS, "q"]) {
    if (params.get(key)) filters[key] = params.get(key);
  }
  return { view: "index", filters };
}

function filterHash(filters) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) params.set(k, v);
  const s = params.toString();
  return s ? "#/?" + s : "#/";
}

function route() {
  if (!state.index) return;
  const r = parseHash();
  if (r.view === "episode") {
    showEpisode(r.n);
  } else if (r.view === "compare") {
    showCompare(r.params);
  } else {
    state.lastIndexHash = location.hash || "#/";
    showIndex(r.filters);
  }
}

window.addEventListener("hashchange", route);

window.fembenchIndex = function (data) {
  state.index = data;
  state.fields = Object.fromEntries(data.fields.map((f, i) => [f, i]));
  route();
};

// ------------------------------------------------------------ index

function sectionTable(section) {
  const head = el("tr", {}, ...section.headers.map((h) => el("th", {}, h)));
  const body = section.rows.map((row, i) =>
    el(
      "tr",
      {},
      ...row.map((cell, j) => {
        const link = section.links[i][j];
        const href = link && (link.view === "compare" ? compareHash(link) : filterHash(link));
        return el("td", {}, link ? el("a", { href }, cell) : cell);
      })
    )
  );
  return el("table", { class: "section", "data-stem": section.stem }, el("thead", {}, head), el("tbody", {}, ...body));
}

function renderIndexShell() {
  const data = state.index;
  const app = document.getElementById("app");
  app.replaceChildren();
  app.append(el("h1", {}, data.title));
  app.append(
    el(
      "table",
      { id: "runs" },
      el("tr", {}, el("th", {}, "Run"), el("th", {}, "Path"), el("th", {}, "Episodes"), el("th", {}, "Created")),
      ...data.runs.map((r) => el("tr", {}, el("td", {}, r.run_id), el("td", {}, r.path), el("td", {}, String(r.episodes)), el("td", {}, r.created)))
    )
  );
  for (const w of data.warnings) app.append(el("p", { class: "warning" }, w));
  app.append(el("p", {}, el("a", { id: "compare-link", href: compareHash({ arms: data.compare.arms.slice(0, 2).map((_, i) => i) }) }, "Compare agents or models side by side")));
  app.append(el("h2", {}, "Episodes"), filterControls(), el("p", { id: "episode-count" }), pager(), el("div", { id: "episode-list" }));
  const tables = el("details", { id: "tables", open: "" }, el("summary", {}, "Tables (every cell links to its episodes)"));
  for (const s of data.sections) tables.append(el("h3", {}, s.title), sectionTable(s));
  app.append(tables);
  if (data.plots.length) {
    const plots = el("div", { class: "plots" }, el("h2", {}, "Plots"));
    for (const p of data.plots) {
      plots.append(el("a", { href: p.svg, title: p.caption + " (SVG)" }, el("img", { src: p.png, alt: p.caption })));
    }
    app.append(plots);
  }
  state.shell = true;
}

function distinct(field) {
  const i = state.fields[field];
  return [...new Set(state.index.episodes.map((r) => r[i]))].filter((v) => v !== "").sort();
}

function filterControls() {
  const box = el("div", { class: "filters", id: "filters" });
  for (const key of FILTER_KEYS) {
    const select = el("select", { id: "filter-" + key, "data-key": key }, el("option", { value: "" }, "(all)"));
    for (const v of distinct(key)) select.append(el("option", { value: String(v) }, String(v)));
    select.addEventListener("change", onFilterInput);
    box.append(el("label", {}, key, select));
  }
  const search = el("input", { id: "filter-q", "data-key": "q", type: "search", placeholder: "task contains" });
  search.addEventListener("change", onFilterInput);
  box.append(el("label", {}, "search", search));
  return box;
}

function onFilterInput() {
  const filters = {};
  for (const node of document.querySelectorAll("#filters [data-key]")) {
    if (node.value) filters[node.dataset.key] = node.value;
  }
  location.hash = filterHash(filters);
}

function pager() {
  const prev = el("button", { id: "page-prev", type: "button" }, "Previous");
  const next = el("button", { id: "page-next", type: "button" }, "Next");
  prev.addEventListener("click", () => { state.page = Math.max(0, state.page - 1); renderList(); });
  next.addEventListener("click", () => { state.page += 1; renderList(); });
  return el("div", { class: "pager" }, prev, next, el("span", { id: "page-label" }));
}

function showIndex(filters) {
  document.getElementById("crumb").textContent = "";
  if (!state.shell) renderIndexShell();
  for (const node of document.querySelectorAll("#filters [data-key]")) {
    node.value = filters[node.dataset.key] || "";
  }
  const f = state.fields;
  const q = (filters.q || "").toLowerCase();
  state.rows = state.index.episodes.filter((r) => {
    for (const key of FILTER_KEYS) {
      if (filters[key] !== undefined && String(r[f[key]]) !== filters[key]) return false;
    }
    return !q || String(r[f.task]).toLowerCase().includes(q);
  });
  state.page = 0;
  renderList();
}

function renderList() {
  const f = state.fields;
  const total = state.index.episodes.length;
  const pages = Math.max(1, Math.ceil(state.rows.length / PAGE_SIZE));
  state.page = Math.min(state.page, pages - 1);
  document.getElementById("episode-count").textContent = `${state.rows.length} of ${total} episodes`;
  document.getElementById("page-label").textContent = `page ${state.page + 1} of ${pages}`;
  const cols = ["model", "agent", "track", "task", "repeat", "status", "stage", "reason", "attempts", "score", "tokens", "cost", "seconds"];
  const head = el("tr", {}, el("th", {}, "#"), ...cols.map((c) => el("th", {}, c)));
  const shown = state.rows.slice(state.page * PAGE_SIZE, (state.page + 1) * PAGE_SIZE);
  const body = shown.map((r) =>
    el(
      "tr",
      { class: "episode-row", "data-n": String(r[f.n]) },
      el("td", {}, el("a", { href: "#/episode/" + r[f.n] }, String(r[f.n]))),
      ...cols.map((c) => el("td", c === "status" ? { class: "status-" + r[f.status] } : {}, fmt(r[f[c]])))
    )
  );
  document.getElementById("episode-list").replaceChildren(el("table", { id: "episodes" }, el("thead", {}, head), el("tbody", {}, ...body)));
}

// ------------------------------------------------------------ episodes

// A data file is a script calling a global function with its number and its
// data; a loader keeps what arrived and calls whoever waits for it.
function dataLoader(dir, what) {
  const arrived = {};
  const waiting = {};
  return {
    arrive(k, data) {
      arrived[k] = data;
      const pending = waiting[k] || [];
      delete waiting[k];
      for (const done of pending) done(data);
    },
    load(k, done) {
      if (arrived[k]) return done(arrived[k]);
      if (waiting[k]) return waiting[k].push(done); // its script is on its way
      waiting[k] = [done];
      const script = el("script", { src: `${dir}/${k}.js` });
      script.addEventListener("error", () => {
        document.getElementById("app").replaceChildren(el("p", { class: "warning" }, `${what} ${k} is not in this site`));
      });
      document.body.append(script);
    },
  };
}

const episodeFiles = dataLoader("data/episodes", "episode");
window.fembenchEpisode = episodeFiles.arrive;

function loadEpisode(n, done) {
  episodeFiles.load(n, done);
}

function showEpisode(n) {
  state.shell = false;
  document.getElementById("crumb").textContent = ` / episode ${n}`;
  document.getElementById("app").replaceChildren(el("p", {}, "Loading episode\u2026"));
  loadEpisode(n, (ep) => {
    if (parseHash().n === n) renderEpisode(n, ep);
  });
}

function renderEpisode(n, ep) {
  const app = document.getElementById("app");
  const status = ep.status === "error" ? "error" : ep.passed ? "passed" : "failed";
  app.replaceChildren(
    el("p", {}, el("a", { id: "back", href: state.lastIndexHash }, "\u2190 back to the episodes")),
    el("h1", { id: "episode-title" }, `${ep.task} \u00b7 ${ep.model} \u00b7 ${ep.agent} \u00b7 ${ep.track} \u00b7 repeat ${ep.repeat}`),
    el(
      "p",
      { class: "meta" },
      el("span", { class: "status-" + status, id: "episode-status" }, status),
      ` score ${fmt(ep.score, 3)}; ${ep.attempts.length} attempt(s); failed stage ${fmt(ep.failed_stage)} (${fmt(ep.reason)}); ` +
        `tokens ${ep.prompt_tokens} / ${ep.completion_tokens}; cost ${ep.cost_usd === null ? "unknown" : "$" + ep.cost_usd.toFixed(4)}; ` +
        `${fmt(ep.seconds, 2)} s; run ${ep.run}`
    )
  );
  const compare = episodeCompareHash(ep);
  if (compare) app.append(el("p", {}, el("a", { id: "episode-compare", href: compare }, "this task side by side across agents and models")));
  if (ep.error) app.append(el("pre", { class: "warning" }, ep.error));
  ep.attempts.forEach((a, i) => app.append(attemptView(a, i + 1, ep.attempts.length)));
}

// `position` counts from 1 in the order attempts were made; data-index keeps
// the index the log recorded.
function attemptView(a, position, count) {
  const box = el("section", { class: "attempt", id: "attempt-" + position, "data-index": String(a.index) });
  box.append(el("h2", {}, `Attempt ${position} of ${count}: `, attemptVerdict(a)), attemptMeta(a));
  const prompt = el("details", { class: "prompt" }, el("summary", {}, "Prompt"));
  for (const m of a.messages) prompt.append(el("h4", {}, m.role), el("pre", { class: "message" }, m.content));
  box.append(prompt);
  appendOutcome(box, a, "h3");
  if (a.diff) box.append(el("h3", {}, "Code changes from the previous attempt"), diffView(a.diff));
  return box;
}

function attemptVerdict(a) {
  const verdict = a.passed === null ? "not scored" : a.passed ? "passed" : "failed";
  return el("span", { class: a.passed ? "status-passed" : "status-failed" }, verdict);
}

function attemptMeta(a) {
  return el(
    "p",
    { class: "meta" },
    `tokens ${fmt(a.prompt_tokens)} / ${fmt(a.completion_tokens)}; cost ${a.cost_usd === null ? "unknown" : "$" + a.cost_usd.toFixed(4)}; ` +
      `model ${fmt(a.model_seconds, 2)} s; scoring ${fmt(a.score_seconds, 2)} s`
  );
}

// The reply, its model error, stages, facts and feedback, under headings of
// level `h` (an episode page and a comparison's cell show them alike).
function appendOutcome(box, a, h) {
  box.append(el(h, {}, "Reply"));
  const reply = el("div", { class: "reply" });
  for (const seg of a.reply) reply.append(seg.kind === "code" ? highlight(seg.text, "code extracted") : el("pre", { class: "prose" }, seg.text));
  box.append(reply);
  if (a.model_error) box.append(el("p", { class: "warning" }, "model error: " + a.model_error));
  if (a.stages.length) {
    box.append(
      el(h, {}, "Stages"),
      el(
        "table",
        { class: "stages" },
        el("tr", {}, ...["stage", "passed", "reason", "detail", "seconds"].map((x) => el("th", {}, x))),
        ...a.stages.map((s) =>
          el("tr", {}, el("td", {}, s.stage), el("td", { class: s.passed ? "status-passed" : "status-failed" }, s.passed ? "yes" : "no"), el("td", {}, fmt(s.reason)), el("td", {}, fmt(s.detail)), el("td", {}, fmt(s.seconds, 3)))
        )
      )
    );
  }
  if (a.facts.length) box.append(el("ul", { class: "facts" }, ...a.facts.map((x) => el("li", {}, x))));
  if (a.feedback) box.append(el(h, {}, "Feedback given to the next attempt"), el("pre", { class: "feedback" }, a.feedback));
}

// ------------------------------------------------------------ code

const PY_TOKEN = new RegExp(
  [
    "(#[^\\n]*)",
    "(\"\"\"[\\s\\S]*?\"\"\"|'''[\\s\\S]*?'''|\"(?:\\\\.|[^\"\\\\\\n])*\"|'(?:\\\\.|[^'\\\\\\n])*')",
    "\\b(\\d+(?:\\.\\d*)?(?:[eE][+-]?\\d+)?)\\b",
    "\\b(def|class|return|if|elif|else|for|while|in|not|and|or|import|from|as|with|try|except|finally|raise|lambda|yield|pass|break|continue|None|True|False|is|assert|global|nonlocal|del|async|await)\\b",
  ].join("|"),
  "g"
);

function highlight(code, cls) {
  const pre = el("pre", { class: cls });
  let last = 0;
  for (const m of code.matchAll(PY_TOKEN)) {
    if (m.index > last) pre.append(code.slice(last, m.index));
    const kind = m[1] !== undefined ? "c" : m[2] !== undefined ? "s" : m[3] !== undefined ? "n" : "k";
    pre.append(el("span", { class: "tok-" + kind }, m[0]));
    last = m.index + m[0].length;
  }
  pre.append(code.slice(last));
  return pre;
}

function diffView(lines, same) {
  const pre = el("pre", { class: "diff" });
  if (!lines.length) pre.append(same || "(no change)");
  for (const line of lines) {
    const header = line.startsWith("@@") || line.startsWith("+++ ") || line.startsWith("--- ");
    const cls = header ? "diff-hunk" : line.startsWith("+") ? "diff-add" : line.startsWith("-") ? "diff-del" : null;
    pre.append(cls ? el("span", { class: cls }, line) : line + "\n");
  }
  return pre;
}
