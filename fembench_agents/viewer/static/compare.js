// The side-by-side comparison (#/compare?arms=0,1&track=...&show=...&q=...).
// An arm is a model and an agent (index.compare.arms); the page lists the
// tasks, counts them by which arms solved them, filters to a pattern or to
// the tasks where the arms disagree, and shows per task the episodes paired
// by repeat index, attempt by attempt, with the code's diff from arm A's
// program to each other arm's (data/compare/<k>.js, computed with difflib).
// Uses el, fmt, highlight, diffView, loadEpisode and the outcome parts of app.js.
"use strict";

const COMPARE_PAGE_SIZE = 10; // tasks
const REPEATS_SHOWN = 5; // of a task, until asked for the rest (each loads an episode file per arm)
const MAX_ARMS = 26; // lettered A to Z
const compareState = { page: 0 };

function letter(k) {
  return String.fromCharCode(65 + k);
}

function allLetters(count) {
  return [...Array(count).keys()].map(letter).join("");
}

function parseCompareParams(query) {
  const p = new URLSearchParams(query || "");
  const known = state.index.compare.arms.length;
  const arms = (p.get("arms") || "")
    .split(",")
    .filter((x) => /^\d+$/.test(x))
    .map(Number)
    .filter((i) => i < known);
  return {
    arms: [...new Set(arms)].sort((a, b) => a - b), // arm i before arm j when i < j, as the diffs are stored
    track: p.get("track") || "",
    show: p.get("show") || "all",
    q: p.get("q") || "",
  };
}

function compareHash(params) {
  const p = new URLSearchParams();
  p.set("arms", Array.isArray(params.arms) ? params.arms.join(",") : params.arms);
  if (params.track) p.set("track", params.track);
  if (params.show && params.show !== "all") p.set("show", params.show);
  if (params.q) p.set("q", params.q);
  return "#/compare?" + p.toString().replace(/%2C/g, ",");
}

// The comparison of every arm that ran an episode's task, at that task.
function episodeCompareHash(ep) {
  const compare = state.index.compare;
  const task = compare.tasks.find((t) => t.track === ep.track && t.task === ep.task);
  if (!task) return null;
  const arms = task.results.map((r, i) => (r ? i : null)).filter((i) => i !== null);
  return arms.length > 1 ? compareHash({ arms, track: ep.track, q: ep.task }) : null;
}

// Which of the picked arms solved the task, as their letters ("none": no arm);
// null when some picked arm did not run it.
function solvedPattern(task, arms) {
  if (arms.some((i) => !task.results[i])) return null;
  return arms.map((i, k) => (task.results[i].solved ? letter(k) : "")).join("") || "none";
}

function patternLabel(pattern, count) {
  const every = allLetters(count);
  if (pattern === every) return count === 2 ? "Both" : "All";
  if (pattern === "none") return count === 2 ? "Neither" : "None";
  return pattern.split("").join(" and ") + " only";
}

function shownBy(show, pattern, count) {
  if (show === "all") return true;
  if (show === "missing") return pattern === null;
  if (pattern === null) return false;
  if (show === "disagree") return pattern !== "none" && pattern.length !== count;
  return pattern === show;
}

function showCompare(params) {
  state.shell = false;
  document.getElementById("crumb").textContent = " / compare";
  const compare = state.index.compare;
  const app = document.getElementById("app");
  const count = params.arms.length;
  const q = params.q.toLowerCase();
  const scope = compare.tasks
    .map((t, k) => ({ ...t, k, pattern: solvedPattern(t, params.arms) }))
    .filter((t) => (!params.track || t.track === params.track) && (!q || t.task.toLowerCase().includes(q)))
    .filter((t) => params.arms.some((i) => t.results[i])); // a task none of the arms ran is not theirs to compare
  const patterns = countedPatterns(scope, count);
  app.replaceChildren(
    el("p", {}, el("a", { id: "back", href: state.lastIndexHash }, "\u2190 back to the episodes")),
    el("h1", {}, "Side by side"),
    compareForm(params, patterns)
  );
  if (count < 2 || count > MAX_ARMS) {
    app.append(el("p", { class: "warning", id: "compare-warning" }, `pick two to ${MAX_ARMS} arms to compare (${params.arms.length} picked)`));
    return;
  }
  app.append(
    el("ul", { id: "compare-arms" }, ...params.arms.map((i, k) => {
      const arm = compare.arms[i];
      return el("li", {}, el("b", {}, letter(k)), `: ${arm.label} (run ${arm.runs.join(", ")}; ${arm.episodes} episodes)`);
    })),
    el(
      "p",
      { class: "meta" },
      "A task counts as solved by an arm when a strict majority of its repeats passed, as in the paired tests. " +
        "Episodes are paired by repeat index (repeat 0 of every arm side by side, then repeat 1, ...), attempts by their order, " +
        "and the code's diff goes from arm A's program to each other arm's."
    )
  );
  app.append(compareCounts(params, scope, count, patterns));
  compareState.rows = scope.filter((t) => shownBy(params.show, t.pattern, count));
  compareState.scope = scope.length;
  compareState.params = params;
  compareState.page = 0;
  const prev = el("button", { id: "compare-prev", type: "button" }, "Previous tasks");
  const next = el("button", { id: "compare-next", type: "button" }, "Next tasks");
  prev.addEventListener("click", () => { compareState.page = Math.max(0, compareState.page - 1); renderCompareTasks(); });
  next.addEventListener("click", () => { compareState.page += 1; renderCompareTasks(); });
  app.append(
    el("p", { id: "compare-task-count" }),
    el("div", { class: "pager" }, prev, next, el("span", { id: "compare-page-label" })),
    el("div", { id: "compare-tasks" })
  );
  renderCompareTasks();
}

function compareForm(params, patterns) {
  const compare = state.index.compare;
  const box = el("div", { class: "filters", id: "compare-form" });
  const arms = el("fieldset", { id: "compare-arm-picker" }, el("legend", {}, "arms (a model and an agent)"));
  compare.arms.forEach((arm, i) => {
    const pick = el("input", { type: "checkbox", id: "arm-" + i, "data-arm": String(i) });
    pick.checked = params.arms.includes(i);
    pick.addEventListener("change", onCompareInput);
    arms.append(el("label", { class: "arm-choice" }, pick, ` ${arm.label} (run ${arm.runs.join(", ")})`));
  });
  const track = el("select", { id: "compare-track" }, el("option", { value: "" }, "(all)"));
  for (const t of [...new Set(compare.tasks.map((x) => x.track))].sort()) track.append(el("option", { value: t }, t));
  track.value = params.track;
  const show = el("select", { id: "compare-show" });
  const choices = [["all", "every task"], ["disagree", "where they disagree"], ...patterns.map((p) => [p, patternLabel(p, params.arms.length)])];
  for (const [value, label] of [...choices, ["missing", "not run by every arm"]]) show.append(el("option", { value }, label));
  show.value = params.show;
  const search = el("input", { id: "compare-q", type: "search", placeholder: "task contains", value: params.q });
  for (const node of [track, show, search]) node.addEventListener("change", onCompareInput);
  box.append(arms, el("label", {}, "track", track), el("label", {}, "show", show), el("label", {}, "search", search));
  return box;
}

// The patterns the counts name: for two arms always Both, A only, B only and
// Neither; for more, All, None and every other pattern some task shows.
function countedPatterns(scope, count) {
  if (count < 2) return [];
  const every = allLetters(count);
  if (count === 2) return [every, "A", "B", "none"];
  const seen = new Set(scope.map((t) => t.pattern).filter((p) => p !== null && p !== every && p !== "none"));
  return [every, ...[...seen].sort(), "none"];
}

function onCompareInput() {
  const arms = [...document.querySelectorAll("#compare-arm-picker [data-arm]")].filter((b) => b.checked).map((b) => Number(b.dataset.arm));
  const show = document.getElementById("compare-show").value;
  const track = document.getElementById("compare-track").value;
  location.hash = compareHash({ arms, track, show, q: document.getElementById("compare-q").value });
}

// Counts of the tasks in scope by which arms solved them, each a link to those tasks.
function compareCounts(params, scope, count, patterns) {
  const tally = {};
  for (const t of scope) tally[t.pattern] = (tally[t.pattern] || 0) + 1;
  const entries = [
    ["all", "Tasks", scope.length],
    ...patterns.map((p) => [p, patternLabel(p, count), tally[p] || 0]),
    ["disagree", "Disagree", scope.filter((t) => shownBy("disagree", t.pattern, count)).length],
  ];
  if (tally.null) entries.push(["missing", "Not run by every arm", tally.null]);
  const box = el("p", { id: "compare-counts" });
  for (const [show, label, n] of entries) {
    const cls = show === params.show ? "count chosen" : "count";
    box.append(el("a", { class: cls, "data-show": show, href: compareHash({ ...params, show }) }, `${label}: ${n}`), " ");
  }
  return box;
}

function renderCompareTasks() {
  const rows = compareState.rows;
  const pages = Math.max(1, Math.ceil(rows.length / COMPARE_PAGE_SIZE));
  compareState.page = Math.min(compareState.page, pages - 1);
  document.getElementById("compare-task-count").textContent = `${rows.length} of ${compareState.scope} tasks`;
  document.getElementById("compare-page-label").textContent = `page ${compareState.page + 1} of ${pages}`;
  const shown = rows.slice(compareState.page * COMPARE_PAGE_SIZE, (compareState.page + 1) * COMPARE_PAGE_SIZE);
  document.getElementById("compare-tasks").replaceChildren(...shown.map((t) => compareTask(t, compareState.params.arms)));
}

function verdictText(result) {
  if (!result) return "not run";
  return `${result.passes} of ${result.repeats} passed, ${result.solved ? "solved" : "not solved"}`;
}

function compareTask(task, arms) {
  const box = el("section", { class: "compare-task", "data-track": task.track, "data-task": task.task });
  box.append(
    el("h2", {}, `${task.task} \u00b7 ${task.track}`),
    el("p", { class: "meta compare-verdicts" }, arms.map((i, k) => `${letter(k)}: ${verdictText(task.results[i])}`).join("; "))
  );
  loadCompareTask(task.k, (data) => {
    for (const pair of data.repeats.slice(0, REPEATS_SHOWN)) box.append(compareRepeat(pair, arms));
    const rest = data.repeats.slice(REPEATS_SHOWN);
    if (!rest.length) return;
    const more = el("button", { type: "button", class: "more-repeats" }, `show the other ${rest.length} repeats`);
    more.addEventListener("click", () => more.replaceWith(...rest.map((pair) => compareRepeat(pair, arms))));
    box.append(more);
  });
  return box;
}

const compareFiles = dataLoader("data/compare", "compared task");
window.fembenchCompareTask = compareFiles.arrive;

function loadCompareTask(k, done) {
  compareFiles.load(k, done);
}

// One repeat index: a column per arm, a row per attempt, and under each row
// the diffs from arm A's program to every other arm's at that attempt.
function compareRepeat(pair, arms) {
  const box = el("div", { class: "compare-repeat", "data-repeat": String(pair.repeat) });
  box.append(el("h3", {}, `Repeat ${pair.repeat}`));
  const ns = arms.map((i) => pair.episodes[i]);
  const present = ns.filter((n) => n !== null);
  let loaded = 0;
  const episodes = {};
  for (const n of present) {
    loadEpisode(n, (ep) => {
      episodes[n] = ep;
      loaded += 1;
      if (loaded === present.length) fillRepeat(box, pair, arms, ns.map((x) => (x === null ? null : episodes[x])));
    });
  }
  return box;
}

function fillRepeat(box, pair, arms, eps) {
  const columns = { style: `grid-template-columns: repeat(${arms.length}, minmax(0, 1fr))` };
  const head = el("div", { class: "compare-row compare-head", ...columns });
  eps.forEach((ep, k) => head.append(episodeHead(ep, pair.episodes[arms[k]], k, pair.repeat)));
  box.append(head);
  const depth = Math.max(...eps.map((ep) => (ep ? ep.attempts.length : 0)));
  for (let p = 0; p < depth; p++) {
    const row = el("div", { class: "compare-row", "data-attempt": String(p + 1), ...columns });
    eps.forEach((ep, k) => row.append(compareCell(ep, k, p)));
    box.append(row);
    for (let k = 1; k < arms.length; k++) {
      const lines = (pair.diffs[`${arms[0]}-${arms[k]}`] || [])[p];
      if (!lines) continue; // one of the two has no episode, or no attempt p + 1
      box.append(
        el("h4", { class: "compare-diff-title" }, `Code, attempt ${p + 1}: A \u2192 ${letter(k)}`),
        diffView(lines, "(the same code)")
      );
    }
  }
}

function episodeHead(ep, n, k, repeat) {
  if (!ep) return el("div", { class: "compare-cell" }, el("h4", {}, `${letter(k)}: no repeat ${repeat}`));
  const status = ep.status === "error" ? "error" : ep.passed ? "passed" : "failed";
  const cost = ep.cost_usd === null ? "unknown" : "$" + ep.cost_usd.toFixed(4);
  return el(
    "div",
    { class: "compare-cell" },
    el("h4", {}, `${letter(k)}: `, el("a", { href: "#/episode/" + n }, `${ep.model} / ${ep.agent}`), " ", el("span", { class: "status-" + status }, status)),
    el("p", { class: "meta" }, `${ep.attempts.length} attempt(s); tokens ${ep.prompt_tokens} / ${ep.completion_tokens}; cost ${cost}; run ${ep.run}`)
  );
}

function compareCell(ep, k, p) {
  const cell = el("div", { class: "compare-cell", "data-arm": letter(k) });
  if (!ep) return cell;
  const a = ep.attempts[p];
  if (!a) {
    cell.append(el("p", { class: "meta" }, `no attempt ${p + 1}`));
    return cell;
  }
  cell.append(el("h4", {}, `${letter(k)}, attempt ${p + 1} of ${ep.attempts.length}: `, attemptVerdict(a)), attemptMeta(a));
  appendOutcome(cell, a, "h5");
  return cell;
}
