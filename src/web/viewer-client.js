// The trajectory viewer's page script (inlined into the HTML by viewer-html.ts). It reads the data from
// the embedded JSON data tag (type application/json) and builds every node with textContent: no data ever
// goes through innerHTML, so trajectory text (HTML, script tags) is shown as text.
(function () {
  "use strict";
  const MAX_ROWS = 1000;
  const LONG_RESULT = 1500;
  const data = JSON.parse(document.getElementById("viewer-data").textContent);
  const runs = data.runs;
  const episodes = data.episodes;
  const byId = (id) => document.getElementById(id);
  const controls = {
    run: byId("filter-run"),
    status: byId("filter-status"),
    min: byId("filter-min"),
    max: byId("filter-max"),
    text: byId("filter-text"),
    sort: byId("sort"),
  };
  const list = byId("episode-list");
  const detail = byId("detail");
  let shown = [];
  let selected = -1;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  const formatReward = (value) => (typeof value === "number" ? value.toFixed(3) : "—");
  const runName = (run) => `${run.env} · ${run.label}${run.runId ? ` · ${run.runId}` : ""}`;

  /** Pretty-printed JSON when the text parses, else the text as it is. */
  function pretty(text) {
    try {
      return { text: JSON.stringify(JSON.parse(text), null, 2), json: true };
    } catch {
      return { text, json: false };
    }
  }

  const searchCache = new Map();
  function searchText(episode) {
    let text = searchCache.get(episode);
    if (text === undefined) {
      const parts = [episode.id, episode.answer];
      for (const message of episode.messages) {
        parts.push(message.content, message.reasoning || "");
        for (const call of message.toolCalls || []) parts.push(call.name, call.arguments);
      }
      text = parts.join("\n").toLowerCase();
      searchCache.set(episode, text);
    }
    return text;
  }

  function filtered() {
    const run = controls.run.value;
    const status = controls.status.value;
    const min = controls.min.value === "" ? null : Number(controls.min.value);
    const max = controls.max.value === "" ? null : Number(controls.max.value);
    const needle = controls.text.value.trim().toLowerCase();
    const result = [];
    episodes.forEach((episode, index) => {
      if (run !== "" && String(episode.run) !== run) return;
      if (status !== "" && episode.status !== status) return;
      if ((min !== null || max !== null) && episode.reward === null) return;
      if (min !== null && episode.reward < min) return;
      if (max !== null && episode.reward > max) return;
      if (needle && !searchText(episode).includes(needle)) return;
      result.push(index);
    });
    const [key, direction] = controls.sort.value.split(":");
    if (key) {
      const sign = direction === "desc" ? -1 : 1;
      const value = (index) => (key === "reward" ? episodes[index].reward : key === "turns" ? episodes[index].turns : episodes[index].formatErrors);
      result.sort((a, b) => {
        const left = value(a);
        const right = value(b);
        if (left === null || right === null) return left === right ? a - b : left === null ? 1 : -1;
        return left === right ? a - b : (left - right) * sign;
      });
    }
    return result;
  }

  function renderList() {
    shown = filtered();
    const fragment = document.createDocumentFragment();
    for (const index of shown.slice(0, MAX_ROWS)) {
      const episode = episodes[index];
      const row = el("div", `row ${episode.status}${index === selected ? " selected" : ""}`);
      row.dataset.index = String(index);
      row.setAttribute("role", "option");
      row.tabIndex = -1;
      const top = el("div", "row-top");
      top.append(el("span", "row-id", episode.id), el("span", `badge ${episode.status}`, episode.status));
      const bottom = el("div", "row-meta");
      bottom.append(
        el("span", "", `${episode.env} · ${episode.label}`),
        el("span", "reward", `reward ${formatReward(episode.reward)}`),
        el("span", "", `${episode.turns} turn${episode.turns === 1 ? "" : "s"}`),
        el("span", episode.formatErrors > 0 ? "format-count" : "", `${episode.formatErrors} format errors`),
      );
      row.append(top, bottom);
      fragment.append(row);
    }
    list.replaceChildren(fragment);
    const more = shown.length > MAX_ROWS ? ` (first ${MAX_ROWS} listed; narrow the filters)` : "";
    byId("count").textContent = `${shown.length} of ${episodes.length} episodes${more}`;
  }

  function section(title, open) {
    const box = el("details", "section");
    box.open = open !== false;
    box.append(el("summary", "", title));
    detail.append(box);
    return box;
  }

  function table(rows, className) {
    const node = el("table", className || "kv");
    for (const [key, value, rowClass] of rows) {
      const row = el("tr", rowClass || "");
      const cell = el("td");
      if (value instanceof Node) cell.append(value);
      else cell.textContent = value === null || value === undefined ? "—" : String(value);
      row.append(el("th", "", key), cell);
      node.append(row);
    }
    return node;
  }

  const preBlock = (text, className) => el("pre", className || "", text);
  const jsonValue = (value) => (value !== null && typeof value === "object" ? preBlock(JSON.stringify(value, null, 2), "inline") : String(value));

  function renderReward(episode) {
    const box = section("Reward");
    const breakdown = episode.breakdown;
    if (!breakdown) {
      box.append(el("p", "muted", "No reward: the episode errored before it could be scored (excluded from means, never counted as 0)."));
      return;
    }
    const rows = [["total", formatReward(breakdown.total), "total"]];
    const attributed = new Set();
    for (const [name, value] of Object.entries(breakdown.components)) {
      if (value !== null) {
        rows.push([name, formatReward(value)]);
        continue;
      }
      const matching = breakdown.errors.filter((error) => error.message.includes(`'${name}'`));
      for (const error of matching) attributed.add(error);
      const reasons = matching.map((error) => `${error.code}: ${error.message}`);
      rows.push([name, `not computed${reasons.length > 0 ? ` — ${reasons.join("; ")}` : ""}`, "not-computed"]);
    }
    box.append(table(rows, "kv reward-table"));
    if (breakdown.formula) box.append(el("p", "formula", breakdown.formula));
    for (const error of breakdown.errors) if (!attributed.has(error)) box.append(el("p", "error-line", `${error.code}: ${error.message}`));
  }

  function renderMessage(message, index, toolsProtocol) {
    const role = ["system", "user", "assistant", "tool"].includes(message.role) ? message.role : "other";
    const box = el("div", `msg ${role}${message.isError ? " failed" : ""}`);
    const head = el("div", "msg-head");
    head.append(el("span", "role", role === "tool" ? "tool result" : message.role));
    if (role === "tool" && message.name) head.append(el("span", "tool-name", message.name));
    head.append(el("span", "muted", `#${index}`));
    if (message.isError) head.append(el("span", "badge errored", `error${message.errorKind ? `: ${message.errorKind}` : ""}`));
    if (role === "assistant" && toolsProtocol && !message.toolCalls) head.append(el("span", "badge errored", "no tool call"));
    box.append(head);
    if (message.reasoning) {
      const reasoning = el("details", "reasoning");
      reasoning.append(el("summary", "", `reasoning (${message.reasoning.length} chars)`), preBlock(message.reasoning));
      box.append(reasoning);
    }
    if (role === "tool") {
      const result = pretty(message.content);
      if (result.text.length > LONG_RESULT) {
        const fold = el("details", "long");
        fold.append(el("summary", "", `${result.json ? "JSON" : "text"} result, ${result.text.length} chars (expand)`), preBlock(result.text));
        box.append(fold);
      } else box.append(preBlock(result.text));
    } else if (role === "system" && message.content.length > 400) {
      const fold = el("details", "long");
      fold.append(el("summary", "", `system prompt, ${message.content.length} chars (expand)`), preBlock(message.content));
      box.append(fold);
    } else if (message.content !== "") box.append(preBlock(message.content));
    for (const call of message.toolCalls || []) {
      const callBox = el("div", "call");
      const callHead = el("div", "call-head");
      callHead.append(el("span", "call-name", `→ ${call.name || "(no name)"}`), el("span", "muted", call.id));
      const args = pretty(call.arguments);
      if (!args.json) callHead.append(el("span", "badge errored", "arguments are not valid JSON"));
      callBox.append(callHead, preBlock(args.text));
      box.append(callBox);
    }
    return box;
  }

  function renderDetail(episode) {
    const run = runs[episode.run];
    detail.replaceChildren();
    const title = el("h2", "", episode.id);
    title.append(el("span", `badge ${episode.status}`, episode.status));
    detail.append(title);
    const address = episode.address;
    const task = section("Task");
    task.append(
      table([
        ["environment", `${address.env}${address.version ? ` v${address.version}` : ""}`],
        ["task", `split ${address.split || "?"} · seed ${address.seed ?? "?"} · index ${address.index ?? "?"} · sample ${address.sample ?? "?"}`],
        ["model", `${run.label}${run.model ? ` (${run.model})` : ""}${run.agent ? ` · agent ${run.agent}` : ""}`],
        ["run", run.directory],
        ["gold answer", episode.answer || "—"],
        ["termination", episode.termination],
        ["turns", `${episode.turns}${episode.maxTurns !== null ? ` of ${episode.maxTurns}` : ""}`],
        ["duration", episode.durationMs === null ? "—" : `${episode.durationMs} ms`],
        ["tokens", episode.usage ? `${episode.usage.promptTokens} prompt · ${episode.usage.completionTokens} completion` : "—"],
      ]),
    );
    if (episode.error || episode.errors.length > 0) {
      const box = section("Errors");
      const seen = new Set();
      for (const error of [episode.error, ...episode.errors]) {
        if (!error || seen.has(`${error.code}\n${error.message}`)) continue;
        seen.add(`${error.code}\n${error.message}`);
        box.append(el("p", "error-line", `${error.type} ${error.code} (${error.boundary}): ${error.message}`));
      }
    }
    renderReward(episode);
    if (episode.formatErrors > 0 || episode.formatErrorList.length > 0) {
      const kinds = new Map();
      for (const error of episode.formatErrorList) kinds.set(error.kind, (kinds.get(error.kind) || 0) + 1);
      const byKind = [...kinds].map(([kind, count]) => `${kind} ×${count}`).join(", ");
      const box = section(`Format errors (${episode.formatErrors})${byKind ? `: ${byKind}` : ""}`, episode.formatErrorList.length <= 3);
      box.classList.add("format-errors");
      for (const error of episode.formatErrorList) box.append(el("p", "error-line", `${error.kind}: ${error.message}`));
    }
    const diagnostics = Object.assign({}, episode.diagnostics, episode.breakdown ? episode.breakdown.diagnostics : {});
    if (Object.keys(diagnostics).length > 0)
      section("Diagnostics", false).append(table(Object.entries(diagnostics).map(([key, value]) => [key, jsonValue(value)])));
    const conversation = section(`Conversation (${episode.messages.length} messages)`);
    conversation.id = "conversation";
    episode.messages.forEach((message, index) => conversation.append(renderMessage(message, index, run.protocol === "tools")));
    detail.scrollTop = 0;
  }

  function select(index) {
    if (index < 0 || index >= episodes.length) return;
    selected = index;
    for (const row of list.querySelectorAll(".row.selected")) row.classList.remove("selected");
    const row = list.querySelector(`.row[data-index="${index}"]`);
    if (row) {
      row.classList.add("selected");
      row.scrollIntoView({ block: "nearest" });
    }
    renderDetail(episodes[index]);
    try {
      history.replaceState(null, "", `#${encodeURIComponent(episodes[index].id)}`);
    } catch {
      // Some browsers refuse history changes on file:// pages; the link to an episode is a convenience.
    }
  }

  function renderHeader() {
    byId("summary").textContent = `${episodes.length} episodes from ${runs.length} run${runs.length === 1 ? "" : "s"} · generated ${data.generatedAt}`;
    const notes = runs.flatMap((run) => run.notes.map((note) => `${runName(run)}: ${note}`));
    const box = byId("notes");
    if (notes.length === 0) return;
    box.hidden = false;
    box.append(el("summary", "", `${notes.length} note${notes.length === 1 ? "" : "s"} on the runs`));
    for (const note of notes) box.append(el("div", "", note));
  }

  for (const [index, run] of runs.entries()) {
    const option = el("option", "", `${runName(run)} (${run.episodes})`);
    option.value = String(index);
    controls.run.append(option);
  }
  let timer = 0;
  for (const control of Object.values(controls)) {
    control.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(renderList, control === controls.text ? 150 : 0);
    });
  }
  list.addEventListener("click", (event) => {
    const row = event.target.closest(".row");
    if (row) select(Number(row.dataset.index));
  });
  document.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
    const step = event.key === "ArrowDown" || event.key === "j" ? 1 : event.key === "ArrowUp" || event.key === "k" ? -1 : 0;
    if (step === 0 || shown.length === 0) return;
    event.preventDefault();
    const position = shown.indexOf(selected);
    select(shown[Math.max(0, Math.min(shown.length - 1, position + step))]);
  });
  renderHeader();
  renderList();
  const fromHash = decodeURIComponent(location.hash.slice(1));
  const initial = episodes.findIndex((episode) => episode.id === fromHash);
  if (initial >= 0) select(initial);
  else if (shown.length > 0) select(shown[0]);
  else detail.replaceChildren(el("p", "muted", "No episodes in these runs."));
})();
