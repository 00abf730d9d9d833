// The trajectory viewer: filters and a virtual episode list on the left, one episode on the right.
// Every element is built by h(), which adds text as text nodes: nothing from the run is ever parsed
// as markup, so a tool result or a reply holding a script tag shows as the characters it is.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("run-data").textContent);
  const EPISODES = DATA.episodes;
  const ROW = 52; // px per list row: the list draws only the rows in view, so thousands stay fast
  const LONG = 600; // characters (or 14 lines) past which a tool result starts collapsed
  const ORDER = {
    level: ["easy", "medium", "hard", "impossible"],
    outcome: ["pass", "fail", "error"],
    condition: ["dynamic", "static", "no-user"],
    mode: ["stale_state", "misdiagnosis", "missing_verification", "unlabelled"],
  };
  const MODE_NAMES = {
    stale_state: "stale-state execution", misdiagnosis: "misdiagnosis of the trigger",
    missing_verification: "missing post-adaptation verification", unlabelled: "failed, no label",
  };
  const MODE_TAGS = { stale_state: "stale", misdiagnosis: "misdiag.", missing_verification: "unverified" };
  const conflictNames = {};
  EPISODES.forEach((e) => { if (e.conflict) conflictNames[e.conflict] = e.conflict_name; });
  const FACETS = [
    { id: "domain", label: "domain", values: (e) => [e.domain] },
    { id: "conflict", label: "conflict", values: (e) => (e.conflict ? [e.conflict] : []),
      name: (v) => (conflictNames[v] ? `${v} ${conflictNames[v]}` : v) },
    { id: "level", label: "level", values: (e) => (e.level ? [e.level] : []) },
    { id: "condition", label: "condition", values: (e) => [e.condition] },
    { id: "outcome", label: "outcome", values: (e) => [e.outcome] },
    { id: "mode", label: "failure mode", values: (e) => (e.outcome !== "fail" ? [] : e.modes.length ? e.modes : ["unlabelled"]),
      name: (v) => MODE_NAMES[v] || v },
  ];
  FACETS.forEach((f) => { f.all = new Set(); });
  EPISODES.forEach((e) => {
    e.modes = e.modes || [];
    e.facets = {};
    FACETS.forEach((f) => { e.facets[f.id] = f.values(e); e.facets[f.id].forEach((v) => f.all.add(v)); });
    e.text = `${e.env_id} seed ${e.seed} run ${e.run} ${e.key}`.toLowerCase();
  });

  const state = { filters: {}, search: "", shown: EPISODES, selected: null };

  // ------------------------------------------------------------------ helpers

  function fill(el, ...children) {
    el.replaceChildren();
    children.flat(Infinity).forEach((c) => {
      if (c === null || c === undefined || c === false) return;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    });
    return el;
  }
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => {
      if (v === null || v === undefined || v === false) return;
      if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "class") el.className = v;
      else el.setAttribute(k, v === true ? "" : String(v));
    });
    return fill(el, ...children);
  }
  const pct = (x) => `${(100 * x).toFixed(1)}%`;
  const minutes = (iso) => (iso ? Date.parse(`${iso}Z`) / 60000 : NaN);
  const hhmm = (iso) => (iso ? iso.slice(11, 16) : "");
  const pretty = (value) => {
    if (typeof value !== "string") return JSON.stringify(value, null, 1);
    if (value.length <= 160) return value; // short results read best on one line, as the agent saw them
    try { return JSON.stringify(JSON.parse(value), null, 1); } catch (err) { return value; }
  };
  const signature = (args) => {
    // {"a": 1, "b": "x"} -> a=1, b="x" (arguments sent as an unreadable string stay as they were sent)
    if (args === null || typeof args !== "object" || Array.isArray(args)) return compact(args ?? "");
    return Object.entries(args).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");
  };
  const compact = (value) => (typeof value === "string" ? value : JSON.stringify(value));
  const mark = (ok) => h("span", { class: ok ? "mark ok" : "mark bad" }, ok ? "✓" : "✗");
  const bubble = (cls, who, ...body) => h("div", { class: `msg ${cls}` }, h("div", { class: "who" }, who), body);
  const folded = (cls, label, text) => h("details", { class: cls }, h("summary", {}, label), h("pre", {}, text));
  const diamond = (text) => h("span", { class: "diamond" }, text);
  const OUTCOME_MARK = { pass: "✓", fail: "✗", error: "!" };
  const title = (e) => (e.conflict ? `${e.domain} · ${e.conflict} · ${e.level}` : e.env_id);

  // ------------------------------------------------------------------ filters

  function matches(e, skip) {
    for (const f of FACETS) {
      const want = state.filters[f.id];
      if (f.id !== skip && want && !e.facets[f.id].includes(want)) return false;
    }
    return !state.search || e.text.includes(state.search);
  }

  function sorted(facet, values) {
    const order = ORDER[facet.id];
    return [...values].sort((a, b) => (order ? order.indexOf(a) - order.indexOf(b) : a < b ? -1 : a > b ? 1 : 0));
  }

  function renderFilters() {
    const box = document.getElementById("facets");
    const controls = FACETS.map((f) => {
      if (f.all.size < 2) return null;
      const counts = {};
      let total = 0;
      EPISODES.forEach((e) => {
        if (!matches(e, f.id)) return;
        total += 1;
        e.facets[f.id].forEach((v) => { counts[v] = (counts[v] || 0) + 1; });
      });
      const select = h("select", { id: `f-${f.id}`, "data-facet": f.id,
                                   onchange: (ev) => { state.filters[f.id] = ev.target.value; update(); } },
        h("option", { value: "" }, `all (${total})`),
        sorted(f, f.all).map((v) => h("option", { value: v, selected: state.filters[f.id] === v },
                                    `${f.name ? f.name(v) : v} (${counts[v] || 0})`)));
      return h("label", { class: "facet" }, h("span", {}, f.label), select);
    });
    const focused = document.activeElement && document.activeElement.id; // a rebuilt select keeps the focus
    fill(box, controls);
    if (focused && document.getElementById(focused)) document.getElementById(focused).focus();
  }

  function searchRow() {
    const search = h("input", { id: "f-search", type: "search", placeholder: "search id, seed…",
                                oninput: (ev) => { state.search = ev.target.value.trim().toLowerCase(); update(); } });
    const clear = h("button", { id: "f-clear", onclick: () => {
      state.filters = {}; state.search = ""; search.value = ""; update(); document.getElementById("list").focus();
    } }, "clear");
    fill(document.getElementById("search"), search, clear);
  }

  function renderStats() {
    const shown = state.shown;
    const scored = shown.filter((e) => e.outcome !== "error");
    const passed = shown.filter((e) => e.outcome === "pass").length;
    const mean = scored.reduce((s, e) => s + e.reward, 0) / (scored.length || 1);
    const errors = shown.length - scored.length;
    fill(document.getElementById("stats"),
      h("b", { id: "shown-count" }, shown.length), ` of ${EPISODES.length} episodes · `,
      h("span", { class: "ok" }, `${passed} passed`),
      ` (${pct(passed / (scored.length || 1))} of scored) · mean reward ${mean.toFixed(3)}`,
      errors ? h("span", { class: "warn" }, ` · ${errors} ended on an error (not scored)`) : null);
  }

  function update() {
    state.shown = EPISODES.filter((e) => matches(e));
    renderFilters();
    renderStats();
    document.getElementById("list").scrollTop = 0;
    renderList();
  }

  // ------------------------------------------------------------------ list

  function row(e, index) {
    return h("div", { class: `row ${e.outcome}${state.selected === e ? " selected" : ""}`, "data-key": e.key,
                      title: e.modes.map((m) => MODE_NAMES[m]).join(", ") || null,
                      style: `top:${index * ROW}px;height:${ROW}px`, onclick: () => select(e) },
      h("span", { class: `badge ${e.outcome}`, title: e.outcome }, OUTCOME_MARK[e.outcome]),
      h("div", { class: "row-main" },
        h("div", { class: "row-title" }, title(e), e.modes.map((m) => h("span", { class: "chip mode" }, MODE_TAGS[m] || m))),
        h("div", { class: "row-sub" }, `seed ${e.seed} · run ${e.run} · ${e.condition} · ${e.calls} calls`)),
      h("span", { class: "reward" }, Number(e.reward).toFixed(2)));
  }

  function renderList() {
    const list = document.getElementById("list");
    const rows = document.getElementById("rows");
    rows.style.height = `${state.shown.length * ROW}px`;
    const first = Math.max(0, Math.floor(list.scrollTop / ROW) - 8);
    const last = Math.min(state.shown.length, Math.ceil((list.scrollTop + list.clientHeight) / ROW) + 8);
    const visible = [];
    for (let i = first; i < last; i += 1) visible.push(row(state.shown[i], i));
    fill(rows, ...(state.shown.length ? visible : [h("p", { class: "empty" }, "No episode matches.")]));
  }

  function select(e, keepScroll) {
    state.selected = e;
    history.replaceState(null, "", `#${encodeURIComponent(e.key)}`);
    renderList();
    renderDetail(e);
    if (!keepScroll) document.getElementById("detail").scrollTop = 0;
  }

  function move(by) {
    const at = state.shown.indexOf(state.selected);
    const next = state.shown[Math.min(state.shown.length - 1, Math.max(0, at + by))];
    if (!next) return;
    const list = document.getElementById("list");
    const top = state.shown.indexOf(next) * ROW;
    if (top < list.scrollTop) list.scrollTop = top;
    else if (top + ROW > list.scrollTop + list.clientHeight) list.scrollTop = top + ROW - list.clientHeight;
    select(next);
  }

  // ------------------------------------------------------------------ one episode

  function firedAt(e) {
    // trigger name -> index of the step during which it fired
    const at = {};
    e.steps.forEach((s, i) => s.events.forEach((ev) => { if (ev.trigger && !(ev.trigger in at)) at[ev.trigger] = i; }));
    return at;
  }

  function jump(index) {
    const target = document.getElementById(`step-${index}`);
    if (!target) return;
    target.scrollIntoView({ block: "center" });
    target.classList.remove("flash");
    void target.offsetWidth; // restart the highlight animation
    target.classList.add("flash");
  }

  function changeList(changes) {
    return h("table", { class: "changes" },
      h("tr", {}, h("th", {}, "field"), h("th", {}, "before"), h("th", {}, "after")),
      (changes || []).map((c) => h("tr", {}, h("td", { class: "path" }, c.path),
                                   h("td", { class: "old" }, compact(c.old)), h("td", { class: "new" }, compact(c.new)))));
  }

  function timeline(e) {
    const clocked = e.steps.some((s) => s.clock);
    const start = clocked ? minutes(e.start || e.steps.find((s) => s.clock).clock) : 0;
    const points = e.steps.map((s, i) => (clocked ? minutes(s.clock) : i + 1));
    const triggers = e.triggers.map((t) => ({ t, x: minutes(t.at) }));
    const end = Math.max(start + 1, ...[...points, ...triggers.map((t) => t.x)].filter((x) => !isNaN(x)));
    const left = (x) => `${(100 * (x - start)) / (end - start)}%`;
    const at = firedAt(e);
    const ticks = e.steps.map((s, i) => {
      const kind = s.call ? (e.mutating.includes(s.call.name) ? "write" : "read") : s.reply !== undefined ? "reply" : "bad";
      const what = s.call ? s.call.name : s.reply !== undefined ? "reply" : "broken turn";
      return h("button", { class: `tick ${kind}`, style: `left:${left(points[i])}`, "data-step": i,
                           title: `step ${i + 1}${s.clock ? ` · ${hhmm(s.clock)}` : ""} · ${what}`, onclick: () => jump(i) });
    });
    const markers = triggers.map(({ t, x }, n) => h("button", {
      class: "trigger-mark", style: `left:${left(x)};--row:${n % 3}`, "data-trigger": t.trigger,
      onclick: () => jump(at[t.trigger]),
      title: [`${t.trigger} fired at ${t.at} during ${t.during}`,
              ...(t.changes || []).map((c) => `${c.path}: ${compact(c.old)} → ${compact(c.new)}`)].join("\n"),
    }, diamond("◆"), h("span", { class: "trigger-label" }, `${t.trigger} ${hhmm(t.at)}`)));
    const phases = clocked ? [] : e.steps.flatMap((s, i) => s.events.filter((ev) => ev.type === "task_start")
      .map((ev) => h("span", { class: "phase", style: `left:${left(points[i])}`, title: ev.template || "" },
                     `task ${ev.task + 1}`)));
    const last = Number.isFinite(end) ? hhmm(new Date(end * 60000).toISOString()) : ""; // a clock that does not parse
    const scale = clocked
      ? [hhmm(e.start || e.steps[0].clock), `${Math.round(end - start)} simulated min`, last]
      : ["step 1", `${e.steps.length} steps`, `step ${e.steps.length}`];
    return h("section", { id: "timeline", class: "card" },
      h("h3", {}, clocked ? "Simulated clock" : "Steps"),
      h("div", { class: "track" }, h("div", { class: "axis" }), ticks, markers, phases),
      h("div", { class: "scale" }, scale.map((s) => h("span", {}, s))),
      h("div", { class: "legend" },
        h("span", { class: "tick read" }), e.mutating.length ? "read " : "call ",
        e.mutating.length ? [h("span", { class: "tick write" }), "changes the world "] : null,
        h("span", { class: "tick reply" }), "reply ", triggers.length ? [diamond(" ◆"), " trigger"] : null));
  }

  function checklist(e) {
    if (e.tasks.length) {
      return h("section", { id: "checklist", class: "card" }, h("h3", {}, "Tasks"),
        h("table", { class: "checks" }, e.tasks.map((t, i) => h("tr", { class: t.solved ? "passed" : "failed" },
          h("td", {}, mark(t.solved)), h("td", { class: "name" }, `${i + 1}. ${t.template}`),
          h("td", {}, `${t.outcome || (t.solved ? "solved" : "not solved")} · ${t.actions ?? "?"} actions`)))));
    }
    if (!e.checklist.length) return null;
    const passed = e.checklist.filter((c) => c.passed).length;
    return h("section", { id: "checklist", class: "card" },
      h("h3", {}, `Checklist · ${passed}/${e.checklist.length} hold`),
      h("table", { class: "checks" }, e.checklist.map((c) => h("tr", { class: c.passed ? "passed" : "failed", "data-check": c.name },
        h("td", {}, mark(c.passed)),
        h("td", { class: "name" }, c.name, c.gate ? h("span", { class: "chip gate" }, "gate") : null),
        h("td", {}, c.description)))));
  }

  function triggerCards(e) {
    if (!e.triggers.length) return null;
    const at = firedAt(e);
    return h("section", { id: "triggers", class: "card" }, h("h3", {}, "Triggers: what changed"),
      e.triggers.map((t) => h("div", { class: "trigger", "data-trigger": t.trigger },
        h("div", {}, diamond("◆ "), h("b", {}, t.trigger), ` fired at ${t.at}, ${e.timing[t.trigger] || "around"} `,
          h("code", {}, t.during || "?"),
          at[t.trigger] !== undefined ? h("a", { href: "#", onclick: (ev) => { ev.preventDefault(); jump(at[t.trigger]); } },
                                         ` (step ${at[t.trigger] + 1})`) : null),
        changeList(t.changes),
        t.observable_via ? h("div", { class: "muted" }, "visible through ",
                             h("code", {}, `${t.observable_via}(${compact(t.observable_args || {})})`)) : null)));
  }

  function collapsible(cls, label, text) {
    if (text.length <= LONG && text.split("\n").length <= 14) return h("pre", { class: cls }, text);
    const preview = h("span", { class: "muted" }, text.slice(0, 90).replace(/\s+/g, " "), "…");
    return folded(cls, [`${label} · ${text.length} chars: `, preview], text);
  }

  function event(ev, e) {
    if (ev.trigger) {
      return h("div", { class: "event trigger", "data-trigger": ev.trigger },
        h("div", {}, diamond("◆ "), "trigger ", h("b", {}, ev.trigger),
          ` fired at ${ev.at} (${e.timing[ev.trigger] || "around"} this call)`),
        changeList(ev.changes));
    }
    const rest = Object.entries(ev).filter(([k]) => k !== "type").map(([k, v]) => `${k} ${compact(k === "task" ? v + 1 : v)}`);
    return h("div", { class: "event" }, "• ", h("b", {}, ev.type || "event"), rest.length ? ` (${rest.join(", ")})` : "");
  }

  function step(s, i, e) {
    const isUser = s.call && s.call.name === DATA.user_tool;
    const tool = s.call && !isUser; // a result from the world, not the user's answer
    const meta = [`step ${i + 1}`, s.clock ? hhmm(s.clock) : null,
                  s.tokens ? `${s.tokens[0]} + ${s.tokens[1]} tokens` : null].filter(Boolean);
    return h("div", { class: "step", id: `step-${i}` },
      h("div", { class: "step-meta" }, meta.join(" · ")),
      s.reasoning ? folded("reasoning", "reasoning", s.reasoning) : null,
      s.text ? bubble("assistant", "assistant", h("pre", {}, s.text)) : null,
      s.call ? bubble("assistant call", "assistant calls", h("pre", { class: "call-line" },
                      h("span", { class: "call-name" }, s.call.name), "(", signature(s.call.arguments), ")")) : null,
      s.reply !== undefined ? bubble("assistant reply", "assistant replies", h("pre", {}, s.reply)) : null,
      s.violation ? bubble("violation", "broken turn", h("pre", {}, s.violation)) : null,
      s.result !== undefined ? bubble(tool ? "tool" : "user", tool ? `result of ${s.call.name}` : "user",
                                      collapsible("result", "result", tool ? pretty(s.result) : String(s.result))) : null,
      s.events.map((ev) => event(ev, e)));
  }

  function renderDetail(e) {
    const facts = [
      e.conflict ? `${e.conflict} ${e.conflict_name || ""}` : null, e.level, e.condition,
      e.solvable === false ? "impossible: no valid completion" : null,
      `seed ${e.seed}`, `run ${e.run}`, `${e.calls} calls`, `${e.turns} turns`, e.truncated ? "truncated" : null,
      e.usage ? `${e.usage.prompt_tokens} + ${e.usage.completion_tokens} tokens` : null,
    ].filter(Boolean);
    fill(document.getElementById("detail"),
      h("header", { class: "episode-head" },
        h("h2", {}, h("span", { class: `badge ${e.outcome}` }, OUTCOME_MARK[e.outcome]), e.env_id),
        h("div", { class: "facts" }, facts.map((f) => h("span", { class: "chip" }, f)),
          h("span", { class: `chip outcome ${e.outcome}`, id: "outcome" },
            `${e.outcome} · reward ${Number(e.reward).toFixed(3)}`),
          e.modes.map((m) => h("span", { class: "chip mode" }, MODE_NAMES[m] || m)))),
      e.error ? h("div", { class: "card error" }, h("b", {}, "error: "), e.error) : null,
      e.steps.length ? timeline(e) : null,
      h("div", { class: "cards" }, checklist(e), triggerCards(e)),
      h("section", { id: "conversation", class: "card" }, h("h3", {}, "Conversation"),
        e.system ? folded("system", "system prompt", e.system) : null,
        e.request !== undefined ? bubble("user", `user${e.start ? ` · ${hhmm(e.start)}` : ""}`, h("pre", {}, e.request)) : null,
        e.steps.map((s, i) => step(s, i, e)),
        e.memory ? folded("memory", "final memory", pretty(e.memory)) : null));
  }

  // ------------------------------------------------------------------ start

  fill(document.getElementById("run-title"),
    h("span", { class: "brand" }, "sttgym"), ` ${DATA.run} `, h("span", { class: "muted" }, `· ${DATA.agent} · ${DATA.suite}`));
  // What this page leaves out is said: the other pages of a large run, and lines that were not whole records.
  const notes = [];
  if (DATA.pages > 1) {
    notes.push(`page ${DATA.page} of ${DATA.pages}: episodes ${DATA.first}–${DATA.first + EPISODES.length - 1} of ` +
               `${DATA.total} (sttgym view --page N, or ?page=N)`);
  }
  if (DATA.set_aside_count) {
    notes.push(`${DATA.set_aside_count} line(s) of trajectories.jsonl set aside, not whole records: ` +
               DATA.set_aside.join("; "));
  }
  if (notes.length) document.getElementById("top").append(h("div", { id: "notice", class: "warn" }, notes.join(" · ")));
  document.getElementById("list").addEventListener("scroll", renderList);
  window.addEventListener("resize", renderList);
  document.getElementById("list").addEventListener("keydown", (ev) => {
    if (ev.key === "ArrowDown" || ev.key === "j") { move(1); ev.preventDefault(); }
    if (ev.key === "ArrowUp" || ev.key === "k") { move(-1); ev.preventDefault(); }
  });
  searchRow();
  update();
  const wanted = decodeURIComponent(location.hash.slice(1));
  const first = EPISODES.find((e) => e.key === wanted) || state.shown[0];
  if (first) select(first);
  document.body.dataset.ready = "1";
})();
