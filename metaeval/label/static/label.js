// metaeval label: the page. Every string from the runs, items or labels is put in
// with textContent (through el()), never as markup: trajectories are agent output
// and may hold HTML and script. No data becomes an attribute that is run or followed
// (no href, no src, no on*).
"use strict";

const state = { entries: [], labels: {}, annotator: "", blind: true, index: 0, check: 0,
                shown: [], saved: 0,
                // A change of a label is asked for twice: the first key or click arms it.
                armed: null,
                // Rationales typed before their label, kept until the label is given.
                drafts: {},
                // This session's changes, newest last, for undo (z).
                undo: [] };
// Keys are handled one after another: a label is saved before the next key moves on.
let pending = Promise.resolve();

function el(tag, cls, ...children) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function json(value) {
  return el("pre", null, typeof value === "string" ? value : JSON.stringify(value, null, 2));
}

function keyOf(entry) { return entry.kind + ":" + entry.id; }

function given(entry, check) {
  const got = state.labels[keyOf(entry)];
  return got && got[check] ? got[check] : null;
}

function done(entry) { return entry.checks.every((c) => given(entry, c) !== null); }

function setStatus(text, error) {
  const node = document.getElementById("status");
  node.textContent = text;
  node.className = error ? "error" : "";
}

const STALE = "this page's address is no longer valid: the server was restarted or stopped. " +
  "Open the new address it printed; every label saved so far is in the labels file.";

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  let answer;
  try { answer = await fetch(path, options); }
  catch (error) { throw new Error("the server does not answer (stopped?): " + error.message); }
  // A restarted server has a new token: this tab's requests get its plain-text 403.
  if (answer.status === 403) throw new Error(STALE);
  const type = answer.headers.get("Content-Type") || "";
  if (!type.startsWith("application/json")) throw new Error(answer.status + " " + answer.statusText);
  const value = await answer.json();
  if (!answer.ok) throw new Error(value.error || answer.statusText);
  return value;
}

function filtered() {
  const category = document.getElementById("f-category").value;
  const check = document.getElementById("f-check").value;
  const wanted = document.getElementById("f-state").value;
  return state.entries.filter((e) =>
    (!category || e.category === category) &&
    (!check || e.checks.includes(check)) &&
    (!wanted || (wanted === "near" ? e.near_miss !== "" :
                 wanted === "labelled" ? done(e) : !done(e))));
}

function progress() {
  const total = state.entries.length;
  const labelled = state.entries.filter(done).length;
  document.getElementById("progress").textContent = labelled + " / " + total + " labelled";
}

function renderList() {
  const list = document.getElementById("list");
  list.replaceChildren();
  state.shown = filtered();
  if (state.index >= state.shown.length) state.index = Math.max(0, state.shown.length - 1);
  state.shown.forEach((entry, n) => {
    const button = el("button", (n === state.index ? "current " : "") + (done(entry) ? "done" : ""),
                      entry.id, entry.near_miss ? el("span", "near", "near miss") : null);
    button.type = "button";
    button.dataset.n = String(n);
    button.addEventListener("click", () => { state.index = n; state.check = 0; render(); });
    list.append(button);
  });
  progress();
}

function draftKey(entry, check) { return keyOf(entry) + "|" + check; }

function describe(entry, check) { return entry.id + (check && check !== "*" ? " / " + check : ""); }

// Whether choosing `choice` may go ahead now: a first label may; a change of an
// existing one only when the same choice was armed just before (asked twice).
function allowed(entry, check, choice) {
  const got = given(entry, check);
  if (!got || got.choice === choice) return true;
  const armed = state.armed;
  if (armed && armed.key === draftKey(entry, check) && armed.choice === choice) return true;
  state.armed = { key: draftKey(entry, check), choice: choice };
  setStatus(describe(entry, check) + " is labelled " + got.choice + ": choose " + choice +
            " again to change it (Esc keeps " + got.choice + ")", true);
  document.body.dataset.armed = "1";
  return false;
}

async function give(entry, check, choice, rationale) {
  const old = given(entry, check);
  const draft = state.drafts[draftKey(entry, check)];
  const text = rationale !== undefined ? rationale : draft !== undefined ? draft :
    (old ? old.rationale : "");
  state.armed = null;
  delete document.body.dataset.armed;
  if (old && old.choice === choice && old.rationale === text) return;  // nothing changes
  setStatus("saving…");
  try {
    const answer = await api("api/label", { kind: entry.kind, id: entry.id, check: check,
                                            choice: choice, rationale: text });
    if (old) state.undo.push({ entry: entry, check: check, before: old });
    delete state.drafts[draftKey(entry, check)];
    state.labels = answer.labels;
    state.saved += 1;
    document.body.dataset.saved = String(state.saved);
    setStatus("saved " + entry.id + (check && check !== "*" ? " / " + check : ""));
  } catch (error) {
    setStatus("not saved: " + error.message, true);
    throw error;
  }
}

function choiceButtons(entry, check, choices) {
  const got = given(entry, check);
  const box = el("span", "choice");
  for (const [choice, text] of choices) {
    const button = el("button", got && got.choice === choice ? "on" : "", text);
    button.type = "button";
    button.dataset.choice = choice;
    button.addEventListener("click", () => {
      pending = pending.then(async () => {
        if (allowed(entry, check, choice)) { await give(entry, check, choice); render(); }
      }).catch(() => {});
    });
    box.append(button);
  }
  const input = el("input", "rationale");
  input.placeholder = "rationale (optional)";
  const draft = state.drafts[draftKey(entry, check)];
  input.value = draft !== undefined ? draft : got ? got.rationale : "";
  input.dataset.check = check;
  // Typed before the label: kept as a draft and saved with the label when it comes.
  input.addEventListener("input", () => { state.drafts[draftKey(entry, check)] = input.value; });
  input.addEventListener("keydown", async (event) => {
    if (event.key === "Enter") {
      const now = given(entry, check);
      state.drafts[draftKey(entry, check)] = input.value;
      if (now) { await give(entry, check, now.choice, input.value); }
      else { setStatus("rationale kept: it is saved with the label you choose"); }
      input.blur();
    } else if (event.key === "Escape") { input.blur(); }
  });
  box.append(input);
  return box;
}

const RUN_CHOICES = [["pass", "pass (p)"], ["fail", "fail (f)"], ["unsure", "unsure (u)"]];
const PAIR_CHOICES = [["left", "left better (1)"], ["right", "right better (2)"],
                      ["tie", "tie (t)"], ["unsure", "unsure (u)"]];

function renderRun(view, entry) {
  view.append(el("h2", null, "Task ", entry.task.id));
  if (entry.task.instruction) view.append(el("div", "text", entry.task.instruction));
  if (Object.keys(entry.task.criteria).length) {
    view.append(el("div", null, "criteria: "), json(entry.task.criteria));
  }
  view.append(el("h2", null, "Trajectory"));
  for (const event of entry.events) {
    if (event.type === "message") {
      view.append(el("div", "event " + event.role, el("span", "who", event.role),
                     el("span", "text", event.content)));
    } else if (event.type === "tool_call") {
      const result = !event.answered ? el("div", null, "no result") :
        el("div", null, event.failed ? "result (failed):" : "result:", json(event.result));
      view.append(el("div", "event tool_call" + (event.failed ? " failed" : ""),
                     el("span", "who", "tool call " + event.tool), json(event.args), result));
    } else {
      view.append(el("div", "event failed", el("span", "who", event.type),
                     el("span", "text", event.detail)));
    }
  }
  view.append(el("h2", null, "State before and after"));
  if (!entry.changes.length) view.append(el("div", null, "no change"));
  else {
    const table = el("table", null, el("tr", null, el("th", null, "path"),
                                       el("th", null, "before"), el("th", null, "after")));
    for (const change of entry.changes) {
      table.append(el("tr", null, el("td", null, change.path),
                      el("td", null, change.added ? "(absent)" : json(change.before)),
                      el("td", null, change.removed ? "(absent)" : json(change.after))));
    }
    view.append(table);
  }
  view.append(el("h2", null, "Checks"));
  // Blind (the default): the server sends no verdict, and the page has no column for one.
  const table = el("table", null, el("tr", null, el("th", null, "check"),
                                     state.blind ? null : el("th", null, "grader found"),
                                     el("th", null, "your label")));
  entry.checks.forEach((check, n) => {
    const graded = state.blind ? null : check === "*" ?
      { graded: entry.overall || "not run", reason: "" } :
      entry.graded.find((g) => g.name === check);
    const row = el("tr", n === state.check ? "selected" : "",
                   el("td", null, check === "*" ? "overall verdict (*)" : check),
                   graded && el("td", graded.graded, graded.graded, graded.reason ? " — " : "",
                                graded.reason || null),
                   el("td", null, choiceButtons(entry, check, RUN_CHOICES)));
    row.dataset.check = check;
    table.append(row);
  });
  view.append(table);
}

function renderItem(view, entry) {
  view.append(el("h2", null, "Prompt"), el("div", "text", entry.prompt));
  if (entry.reference) view.append(el("h2", null, "Reference"), el("div", "text", entry.reference));
  if (entry.kind === "pair") {
    view.append(el("div", "pair", el("div", null, el("h2", null, "Left"), el("div", "text", entry.left)),
                   el("div", null, el("h2", null, "Right"), el("div", "text", entry.right))));
    view.append(el("h2", null, "Which is better?"), choiceButtons(entry, "", PAIR_CHOICES));
  } else {
    view.append(el("h2", null, "Response"), el("div", "text", entry.response));
    view.append(el("h2", null, "Your label"), choiceButtons(entry, "", RUN_CHOICES));
  }
}

function render() {
  renderList();
  const view = document.getElementById("view");
  view.replaceChildren();
  const entry = state.shown[state.index];
  if (!entry) { view.append(el("p", null, "Nothing to show under these filters.")); return; }
  state.check = Math.min(state.check, entry.checks.length - 1);
  view.append(el("h2", null, entry.kind === "run" ? "Run " : entry.kind === "pair" ?
                 "Pairwise item " : "Pointwise item ", entry.id),
              el("div", null, "category: ", entry.category || "none", " · ", entry.source));
  if (entry.near_miss) view.append(el("div", "near-miss", "near miss: ", entry.near_miss));
  if (entry.kind === "run") renderRun(view, entry); else renderItem(view, entry);
}

function move(step) {
  if (!state.shown.length) return;
  state.index = Math.min(Math.max(state.index + step, 0), state.shown.length - 1);
  state.check = 0;
  render();
}

async function keyed(typed) {
  const entry = state.shown[state.index];
  const choice = entry && (entry.kind === "pair" ? PAIR_KEYS : KEYS)[typed];
  if (!entry || !choice) return;  // a pair's key on a run, or a run's on a pair
  const check = entry.checks[state.check];
  if (!allowed(entry, check, choice)) return;  // a change: asked for again first
  await give(entry, check, choice);
  if (state.check < entry.checks.length - 1) { state.check += 1; render(); }
  else {
    // Under the "unlabelled" filter the entry has left the list: the next is already here.
    state.check = 0; render(); if (state.shown[state.index] === entry) move(1);
  }
}

const KEYS = { p: "pass", f: "fail", u: "unsure" };
const PAIR_KEYS = { "1": "left", "2": "right", t: "tie", u: "unsure" };

document.addEventListener("keydown", (event) => {
  const target = event.target;
  if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" ||
                 target.tagName === "TEXTAREA")) return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const entry = state.shown[state.index];
  if (KEYS[event.key] || PAIR_KEYS[event.key]) {
    // The entry the key applies to is read when its turn comes, after the saves before it.
    const typed = event.key;
    event.preventDefault();
    pending = pending.then(() => keyed(typed)).catch(() => {});
    return;
  }
  if (event.key === "Escape" && state.armed) {
    state.armed = null; delete document.body.dataset.armed; setStatus("kept");
  } else if (event.key === "z") pending = pending.then(undo).catch(() => {});
  else if (event.key === "n" || event.key === "j") pending = pending.then(() => move(1));
  else if (event.key === "k") pending = pending.then(() => move(-1));
  else if (event.key === "ArrowDown" && entry) {
    event.preventDefault(); state.check = Math.min(state.check + 1, entry.checks.length - 1); render();
  } else if (event.key === "ArrowUp" && entry) {
    event.preventDefault(); state.check = Math.max(state.check - 1, 0); render();
  } else if (event.key === "r" && entry) {
    event.preventDefault();
    const inputs = document.querySelectorAll("#view input.rationale");
    const input = inputs[Math.min(state.check, inputs.length - 1)];
    if (input) input.focus();
  }
});

async function undo() {
  const last = state.undo.pop();
  if (!last) {
    setStatus("nothing to undo: only a change of a label made here can be undone", true);
    return;
  }
  await give(last.entry, last.check, last.before.choice, last.before.rationale);
  state.undo.pop();  // the undo is itself a change: not one to undo again
  setStatus("undone: " + describe(last.entry, last.check) + " is " + last.before.choice + " again");
  render();
}

async function showComparison() {
  const box = document.getElementById("comparison");
  if (!box.hidden) { box.hidden = true; return; }
  const got = await api("api/compare");
  box.replaceChildren(el("h2", null, "Annotators: ", got.annotators.join(", ") || "none"));
  const figures = el("table", null, el("tr", null, ...["labels of", "annotators", "labelled",
    "by 2 or more", "Krippendorff's alpha", "mean pairwise kappa", "pairs"].map((h) => el("th", null, h))));
  for (const f of got.figures) {
    figures.append(el("tr", "figure", el("td", null, f.group === "*" ? "overall verdict (*)" : f.group),
      el("td", null, String(f.annotators)), el("td", null, String(f.labelled)),
      el("td", null, String(f.shared)),
      el("td", "alpha", f.alpha.toFixed(4), f.alpha_reason ? " (" + f.alpha_reason + ")" : ""),
      el("td", "kappa", f.mean_kappa.toFixed(4), f.kappa_reason ? " (" + f.kappa_reason + ")" : ""),
      el("td", null, String(f.pairs))));
  }
  box.append(figures, el("h2", null, "Where they disagree (" + got.disagreements.length + ")"));
  const table = el("table", null, el("tr", null, el("th", null, "what"), el("th", null, "check"),
                                     el("th", null, "labels")));
  for (const d of got.disagreements) {
    table.append(el("tr", "disagreement", el("td", null, d.kind + " " + d.id),
      el("td", null, d.check || ""), el("td", null, Object.entries(d.labels).map(
        ([who, label]) => who + ": " + label).join("; "))));
  }
  box.append(table);
  box.append(el("h2", null, "Progress"));
  const progress = el("table", null, el("tr", null, ...["annotator", "labelled", "total"].map(
    (h) => el("th", null, h))));
  for (const p of got.progress) {
    progress.append(el("tr", "progress", el("td", null, p.annotator),
      el("td", null, String(p.labelled)), el("td", null, String(p.total))));
  }
  box.append(progress);
  box.append(el("h2", null, "Position bias: the side shown first chosen (pairs)"));
  const position = el("table", null, el("tr", null, ...["annotator", "position bias",
    "chose first", "ties", "shown ab / ba", "p (two-sided exact binomial)"].map(
    (h) => el("th", null, h))));
  for (const p of got.positions) {
    position.append(el("tr", "position " + (p.status === "FOUND" ? "found" : ""),
      el("td", null, p.annotator), el("td", null, p.status),
      el("td", null, p.first + " of " + (p.first + p.second)), el("td", null, String(p.ties)),
      el("td", null, p.shown_ab + " / " + p.shown_ba),
      el("td", null, p.reason || p.p_value.toPrecision(3))));
  }
  box.append(position);
  box.hidden = false;
}

function fill(select, values) {
  for (const value of values) {
    const option = el("option", null, value);
    option.value = value;
    select.append(option);
  }
}

async function start() {
  try {
    const got = await api("api/state");
    state.entries = got.entries;
    state.labels = got.labels;
    state.annotator = got.annotator;
    state.blind = got.blind;
  } catch (error) {
    setStatus("cannot load: " + error.message, true);
    return;
  }
  document.getElementById("who").textContent = "annotator: " + state.annotator;
  document.getElementById("mode").textContent = state.blind ?
    "blind: no grader or judge verdict is shown" : "adjudication: grader verdicts shown";
  fill(document.getElementById("f-category"),
       [...new Set(state.entries.map((e) => e.category).filter((c) => c))].sort());
  fill(document.getElementById("f-check"),
       [...new Set(state.entries.flatMap((e) => e.checks).filter((c) => c && c !== "*"))].sort());
  for (const id of ["f-category", "f-check", "f-state"]) {
    document.getElementById(id).addEventListener("change", () => { state.index = 0; render(); });
  }
  document.getElementById("compare").addEventListener("click", () => {
    showComparison().catch((error) => setStatus("cannot compare: " + error.message, true));
  });
  // Open at the first entry this annotator has not labelled: never on one already
  // labelled, where the next keys would be changes.
  state.shown = filtered();
  const first = state.shown.findIndex((e) => !done(e));
  state.index = first < 0 ? 0 : first;
  render();
  document.body.dataset.ready = "1";
}

start();
