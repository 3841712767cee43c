// The modeling app's panels on the web page: a live timeline of a run — the four gates as phases, who is working
// now, each consultation as a card that opens to its markdown record, each gate's verdict with its reasons, the
// team's script runs — with the paper's PDF and the files produced, drawn from GET /api/modeling/timeline and redrawn
// as the run's events arrive (the page hands every event of the runs it shows to `event`). An escalation is a
// question of the Director's run: the page's own ask form answers it. Above it, the problem: the person uploads
// their own (a statement and data files, each checked by the server, which answers a refusal in one line of the
// page's language), sees the tasks the server read from the statement, corrects them (text, kind, drop, add) and
// starts the team on it in a new conversation; or sees the problem the server was started with.

import { api } from "/static/js/api.js";
import { h } from "/static/js/dom.js";
import { formatTime, lang, t } from "/static/js/i18n.js";

const $ = (selector) => document.querySelector(selector);
const REFRESH_MS = 300; // events come in bursts: one read of the workspace per burst
const POLL_MS = 4000; // while a run works, the workspace is read this often even without events
const ENDED = ["finished", "failed", "cancelled"];

// The catalog keys the page picks by a value of the timeline, written out (so the catalogs' checks see every one).
const KEYS = {
  run: {
    running: "modeling.web.run.running", waiting: "modeling.web.run.waiting", finished: "modeling.web.run.finished",
    failed: "modeling.web.run.failed", cancelled: "modeling.web.run.cancelled",
  },
  gate: {
    data_ready: "modeling.web.gate.data_ready", code_runs: "modeling.web.gate.code_runs",
    results_trained: "modeling.web.gate.results_trained", paper_written: "modeling.web.gate.paper_written",
  },
  phase: {
    approved: "modeling.web.phase.approved", conditional: "modeling.web.phase.conditional", accepted: "modeling.web.phase.accepted",
    rejected: "modeling.web.phase.rejected", escalated: "modeling.web.phase.escalated", stopped: "modeling.web.phase.stopped",
    current: "modeling.web.phase.current", pending: "modeling.web.phase.pending",
  },
  status: {
    APPROVED: "modeling.web.gate.status.APPROVED", CONDITIONAL: "modeling.web.gate.status.CONDITIONAL",
    REJECTED: "modeling.web.gate.status.REJECTED",
  },
  decidedBy: { code: "modeling.web.card.decided_by.code", validator: "modeling.web.card.decided_by.validator" },
  asks: {
    forecast: "modeling.web.asks.forecast", policy: "modeling.web.asks.policy", ranking: "modeling.web.asks.ranking",
    estimate: "modeling.web.asks.estimate", number: "modeling.web.asks.number", explanation: "modeling.web.asks.explanation",
  },
  folder: {
    problem: "modeling.web.folder.problem", data: "modeling.web.folder.data", code: "modeling.web.folder.code",
    results: "modeling.web.folder.results", figures: "modeling.web.folder.figures", paper: "modeling.web.folder.paper",
    consultation: "modeling.web.folder.consultation", validation: "modeling.web.folder.validation",
  },
};

/** The words for `value` of a family of KEYS (the value itself when the catalog has no words for it). */
function word(family, value) {
  const key = KEYS[family][value];
  return key ? t(key) : String(value);
}

export function mount({ onError }) {
  const problem = new ProblemPanel({
    summary: $("#mp-summary"),
    statementLabel: $("#mp-statement-label"),
    statement: $("#mp-statement"),
    dataLabel: $("#mp-data-label"),
    data: $("#mp-data"),
    status: $("#mp-status"),
    files: $("#mp-files"),
    form: $("#mp-tasks"),
    note: $("#mp-tasks-note"),
    list: $("#mp-task-list"),
    add: $("#mp-add"),
    start: $("#mp-start"),
    forget: $("#mp-forget"),
    onError,
  });
  const timeline = new Timeline({
    state: $("#mt-state"),
    now: $("#mt-now"),
    phases: $("#mt-phases"),
    paper: $("#mt-paper"),
    cards: $("#mt-cards"),
    files: $("#mt-file-list"),
    onError,
  });
  return {
    ready: Promise.all([timeline.refresh(), problem.refresh()]),
    event: (event) => timeline.heard(event),
    redraw: () => {
      timeline.draw();
      problem.refresh().catch(onError); // the server's lines come in the new language
    },
  };
}

// The problem a new run of the session works on (GET /api/modeling/problem): the person's own, uploaded and
// corrected here, or the server's `--problem`.
export class ProblemPanel {
  constructor(nodes) {
    Object.assign(this, nodes);
    this.view = null;
    this.draft = null; // the tasks as being edited: [{ text, asks }] (null: as the server has them)
    this.notice = null; // { text, tone }
    this.statement.addEventListener("change", () => this.pick(this.statement, "statement"));
    this.data.addEventListener("change", () => this.pick(this.data, "data"));
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.save();
    });
    this.add.addEventListener("click", () => {
      this.edit((tasks) => tasks.push({ text: "", asks: "explanation" }));
      this.list.lastElementChild?.querySelector("textarea")?.focus();
    });
    this.start.addEventListener("click", () => this.begin());
    this.forget.addEventListener("click", () => this.clear());
  }

  query() {
    return `?lang=${encodeURIComponent(lang())}`;
  }

  async refresh() {
    this.view = await api("GET", `/api/modeling/problem${this.query()}`);
    this.draw();
  }

  say(text, tone) {
    this.notice = text ? { text, tone } : null;
    this.drawNotice();
  }

  drawNotice() {
    this.status.hidden = !this.notice;
    this.status.textContent = this.notice ? this.notice.text : "";
    this.status.className = "mp-status";
    if (this.notice) {
      this.status.classList.add(this.notice.tone);
    }
    this.status.setAttribute("role", this.notice && this.notice.tone === "bad" ? "alert" : "status");
  }

  async pick(input, kind) {
    const files = [...input.files];
    input.value = "";
    for (const file of files) {
      if (!(await this.upload(kind, file))) {
        break;
      }
    }
  }

  // One file to POST /api/modeling/problem/{statement|data}; the server's refusal is its own line, in the page's language.
  async upload(kind, file) {
    this.say(t("modeling.web.problem.sending", { name: file.name }), "busy");
    const form = new FormData();
    form.append("file", file, file.name);
    let response;
    try {
      response = await fetch(`/api/modeling/problem/${kind}${this.query()}`, { method: "POST", body: form, credentials: "same-origin" });
    } catch (error) {
      this.say(t("web.error.network", { detail: "" }), "bad");
      return false;
    }
    const body = response.headers.get("content-type")?.includes("json") ? await response.json() : {};
    if (!response.ok) {
      this.say(body.message || t("web.error.generic", { detail: String(response.status) }), "bad");
      return false;
    }
    if (kind === "statement") {
      this.draft = null; // a new statement: its own tasks
    }
    this.view = body;
    this.say(t("modeling.web.problem.done", { name: file.name }), "good");
    this.draw();
    return true;
  }

  async drop(name) {
    try {
      this.view = await api("DELETE", `/api/modeling/problem/data/${encodeURIComponent(name)}${this.query()}`);
    } catch (error) {
      this.say(error.message, "bad");
      return;
    }
    this.say(t("modeling.web.problem.removed", { name }), "good");
    this.draw();
  }

  async clear() {
    try {
      this.view = await api("DELETE", `/api/modeling/problem${this.query()}`);
    } catch (error) {
      this.onError(error);
      return;
    }
    this.draft = null;
    this.say(null);
    this.draw();
  }

  editable() {
    return this.view && this.view.source === "upload";
  }

  tasks() {
    return this.draft || (this.view ? this.view.tasks.map((task) => ({ text: task.text, asks: task.asks })) : []);
  }

  edit(change) {
    const tasks = this.tasks().map((task) => ({ ...task }));
    change(tasks);
    this.draft = tasks;
    this.drawTasks();
  }

  async save() {
    if (!this.draft) {
      return true;
    }
    try {
      this.view = await api("PUT", `/api/modeling/problem/tasks${this.query()}`, { tasks: this.draft });
    } catch (error) {
      this.say(error.message, "bad");
      return false;
    }
    this.draft = null;
    this.say(t("modeling.web.problem.saved"), "good");
    this.draw();
    return true;
  }

  // The team starts on the problem in a new conversation (a conversation keeps the problem it began with).
  async begin() {
    if (this.draft) {
      this.say(t("modeling.web.problem.unsaved"), "bad");
      return;
    }
    if (this.view && this.view.problem) {
      this.say(this.view.problem, "bad");
      return;
    }
    const prompt = document.querySelector("#prompt");
    if (prompt.disabled) {
      this.say(t("modeling.web.problem.busy"), "bad"); // a run works: one at a time
      return;
    }
    document.querySelector("#new-chat")?.click();
    prompt.value = t("modeling.web.problem.start_prompt");
    document.querySelector("#composer")?.requestSubmit();
  }

  draw() {
    const view = this.view;
    const limits = view ? view.limits : { statement_types: [], data_types: [] };
    this.statementLabel.textContent = t("modeling.web.problem.statement_label", { types: limits.statement_types.join(t("web.list_separator")) });
    this.dataLabel.textContent = t("modeling.web.problem.data_label", { types: limits.data_types.join(t("web.list_separator")) });
    const title = view && view.title;
    this.summary.textContent = !view || !view.source
      ? t("modeling.web.problem.none")
      : view.source === "server"
        ? t("modeling.web.problem.server", { title: title || "" })
        : t("modeling.web.problem.uploaded", { title: title || view.statement_name || "" });
    this.start.disabled = !(view && view.ready);
    this.forget.hidden = !this.editable();
    this.drawFiles();
    this.drawTasks();
    if (view && view.problem && !this.notice) {
      this.say(view.problem, "warn");
    }
    this.drawNotice();
  }

  drawFiles() {
    const view = this.view;
    if (!view || !view.source) {
      this.files.replaceChildren();
      return;
    }
    const items = [];
    if (view.statement_name) {
      items.push(h("li", { class: ["mp-file", "statement"] }, t("modeling.web.problem.statement_file", { name: view.statement_name })));
    }
    for (const file of view.data_files) {
      items.push(
        h(
          "li",
          { class: "mp-file", dataset: { name: file.name } },
          h("span", {}, file.name),
          h("span", { class: ["muted", "small", "mt-spaced"] }, size(file.size)),
          // a workbook: the tables the team reads from it, one a sheet
          file.tables && file.tables.join() !== file.name
            ? h("span", { class: ["muted", "small", "mt-spaced", "mp-tables"] }, t("modeling.web.problem.tables", { tables: file.tables.join(t("web.list_separator")) }))
            : null,
          this.editable()
            ? h("button", { type: "button", class: ["small", "mp-remove"], title: t("modeling.web.problem.remove_file", { name: file.name }), on: { click: () => this.drop(file.name) } }, "×")
            : null,
        ),
      );
    }
    if (!view.data_files.length) {
      items.push(h("li", { class: ["muted", "small"] }, t("modeling.web.problem.no_data")));
    }
    this.files.replaceChildren(...items);
  }

  drawTasks() {
    const view = this.view;
    const tasks = this.tasks();
    this.form.hidden = !(view && view.source && (tasks.length || this.editable()));
    if (this.form.hidden) {
      return;
    }
    const editable = this.editable();
    this.note.textContent = t(!editable ? "modeling.web.problem.tasks_server" : view.corrected && !this.draft ? "modeling.web.problem.tasks_corrected" : "modeling.web.problem.tasks_found");
    this.add.hidden = !editable;
    this.form.querySelector("#mp-save").hidden = !editable;
    this.form.querySelector("#mp-save").disabled = !this.draft;
    const kinds = view.limits.asks;
    this.list.replaceChildren(
      ...tasks.map((task, i) =>
        editable
          ? h(
              "li",
              { class: "mp-task", dataset: { n: i + 1 } },
              h("label", { class: "mp-task-head" }, t("modeling.web.problem.task", { n: i + 1 })),
              h("textarea", {
                class: "mp-task-text", rows: 2, maxLength: view.limits.task_chars, value: task.text,
                "aria-label": t("modeling.web.problem.task", { n: i + 1 }),
                on: { input: (event) => this.typed(i, "text", event.target.value) },
              }),
              h(
                "select",
                { class: "mp-task-kind", "aria-label": t("modeling.web.problem.kind"), on: { change: (event) => this.typed(i, "asks", event.target.value) } },
                kinds.map((kind) => h("option", { value: kind, selected: kind === task.asks }, word("asks", kind))),
              ),
              h("button", { type: "button", class: ["small", "mp-drop"], on: { click: () => this.edit((list) => list.splice(i, 1)) } }, t("modeling.web.problem.drop")),
            )
          : h("li", { class: "mp-task", dataset: { n: i + 1 } }, h("span", { class: "mp-task-text" }, task.text), h("span", { class: ["pill", "mp-kind"] }, word("asks", task.asks))),
      ),
    );
  }

  // A keystroke in a task: kept in the draft without redrawing the list (the caret stays where it is).
  typed(i, key, value) {
    const tasks = this.tasks().map((task) => ({ ...task }));
    tasks[i][key] = value;
    this.draft = tasks;
    this.form.querySelector("#mp-save").disabled = false;
    this.note.textContent = t("modeling.web.problem.tasks_found");
  }
}

export class Timeline {
  constructor(nodes) {
    Object.assign(this, nodes);
    this.view = undefined; // GET /api/modeling/timeline (null: no run yet; undefined: not read yet)
    this.runId = null; // the run the page follows (null: the session's newest)
    this.line = null; // who is working now: the run's latest progress line
    this.active = false;
    this.timer = null;
    this.poller = null;
    this.asked = 0;
    this.opened = new Set(); // the records whose card is open: they stay open across redraws
    this.records = new Map(); // file -> its markdown, once fetched
  }

  file(path) {
    const query = this.view ? `?run_id=${encodeURIComponent(this.view.run_id)}` : "";
    return `/api/modeling/files/${path.split("/").map(encodeURIComponent).join("/")}${query}`;
  }

  heard(event) {
    if (event.type === "run_started" && !event.parent_run_id) {
      if (this.runId !== event.run_id) {
        this.line = null;
      }
      this.runId = event.run_id;
      this.active = true;
    } else if (event.type === "model_text" && event.run_id === this.runId) {
      this.line = event.text;
    } else if (event.type === "ask_opened" && event.run_id === this.runId) {
      this.line = t("modeling.web.now.waiting");
    } else if (event.type === "ask_closed" && event.run_id === this.runId) {
      this.line = null; // answered: the run goes on (who works next comes with the timeline)
    } else if (event.type === "run_ended" && event.run_id === this.runId) {
      this.active = false;
      this.line = null;
    }
    this.drawNow();
    this.schedule();
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh().catch(() => {}), REFRESH_MS);
  }

  async refresh() {
    const asked = ++this.asked;
    const query = this.runId ? `?run_id=${encodeURIComponent(this.runId)}` : "";
    let view;
    try {
      view = await api("GET", `/api/modeling/timeline${query}`);
    } catch (error) {
      if (error.code !== "no_workspace") {
        this.onError(error);
      }
      view = null;
    }
    if (asked !== this.asked) {
      return; // a newer read is on its way
    }
    this.view = view;
    if (view && !this.runId) {
      this.runId = view.run_id;
    }
    if (view && ENDED.includes(view.run_status)) {
      this.active = false; // (a read begun before the run ended says it runs: the read after run_ended corrects it)
    } else if (view && ["running", "waiting", "pending"].includes(view.run_status)) {
      this.active = true;
    }
    this.draw();
    clearTimeout(this.poller);
    if (this.active) {
      this.poller = setTimeout(() => this.refresh().catch(() => {}), POLL_MS);
    }
  }

  draw() {
    this.drawNow();
    this.drawPhases();
    this.drawPaper();
    this.drawCards();
    this.drawFiles();
  }

  drawNow() {
    const agent = this.view && this.view.run_status === "running" ? this.view.working : null;
    const line = this.line || (agent ? t("modeling.web.now.working", { agent }) : null);
    const working = this.active && line;
    this.now.hidden = !working;
    this.now.textContent = working ? line : "";
    const status = this.view ? this.view.run_status : null;
    this.state.textContent = status ? word("run", status) : "";
    this.state.className = "mt-badge";
    if (status) {
      this.state.classList.add(status);
    }
  }

  drawPhases() {
    const phases = this.view ? this.view.phases : [];
    this.phases.replaceChildren(
      ...phases.map((phase, i) =>
        h(
          "li",
          { class: ["mt-phase", phase.state], dataset: { gate: phase.gate } },
          h("span", { class: "mt-phase-step" }, String(i + 1)),
          h("span", { class: "mt-phase-name" }, word("gate", phase.gate)),
          h(
            "span",
            { class: "mt-phase-state" },
            word("phase", phase.state),
            phase.attempts > 1 ? h("span", { class: "mt-attempts" }, t("modeling.web.phase.attempts", { n: phase.attempts })) : null,
          ),
        ),
      ),
    );
  }

  drawPaper() {
    const pdf = this.view && this.view.paper_pdf;
    this.paper.hidden = !pdf;
    this.paper.replaceChildren(
      ...(pdf
        ? [
            h("span", { class: "mt-paper-title" }, t("modeling.web.paper.ready")),
            h("a", { class: ["button-like", "primary", "small"], href: this.file(pdf), target: "_blank", rel: "noopener" }, t("modeling.web.paper.open")),
          ]
        : []),
    );
  }

  drawCards() {
    if (this.view === undefined) {
      return;
    }
    if (!this.view || !this.view.cards.length) {
      this.cards.replaceChildren(h("li", { class: ["muted", "mt-empty"] }, t(this.view ? "modeling.web.timeline.nothing_yet" : "modeling.web.timeline.empty")));
      return;
    }
    this.cards.replaceChildren(...this.view.cards.map((card) => this.card(card)));
  }

  card(card) {
    const body =
      card.kind === "consultation" ? this.consultation(card) : card.kind === "verdict" ? this.verdict(card) : this.script(card);
    const details = h(
      "details",
      {
        class: ["mt-card", card.kind, card.status ? card.status.toLowerCase() : card.ok === false ? "failed" : ""],
        open: this.opened.has(card.file),
        dataset: { file: card.file },
        on: { toggle: () => this.toggled(details, card) },
      },
      h("summary", {}, body.summary, h("time", { class: "mt-time", datetime: card.time }, formatTime(card.time))),
      h("div", { class: "mt-card-body" }, body.content, this.recordBox(card)),
    );
    return h("li", {}, details);
  }

  recordBox(card) {
    if (!card.file.endsWith(".md")) {
      return null;
    }
    const text = this.records.get(card.file);
    return h(
      "div",
      { class: "mt-record" },
      h("div", { class: "mt-record-head" }, h("span", {}, t("modeling.web.card.record")), h("a", { href: this.file(card.file), target: "_blank", rel: "noopener" }, card.file)),
      text === undefined ? h("p", { class: ["muted", "small"] }, t("modeling.web.card.loading")) : h("pre", { class: "mt-markdown" }, text),
    );
  }

  async toggled(details, card) {
    if (!details.open) {
      this.opened.delete(card.file);
      return;
    }
    this.opened.add(card.file);
    if (!card.file.endsWith(".md") || this.records.has(card.file)) {
      return;
    }
    try {
      const response = await fetch(this.file(card.file), { credentials: "same-origin" });
      if (!response.ok) {
        throw Object.assign(new Error(String(response.status)), { code: "not_found", status: response.status });
      }
      this.records.set(card.file, await response.text());
    } catch (error) {
      this.onError(error);
      return;
    }
    const box = details.querySelector(".mt-record");
    box?.replaceWith(this.recordBox(card));
  }

  consultation(card) {
    return {
      summary: h(
        "span",
        { class: "mt-summary" },
        h("span", { class: "mt-kind" }, t("modeling.web.card.consultation")),
        h("strong", {}, t("modeling.web.card.consultation_title", { from: card.from_agent, to: card.to_agent, i: card.index })),
        card.question ? h("span", { class: "mt-gist" }, card.question) : null,
      ),
      content: h(
        "dl",
        { class: "fields" },
        field(t("modeling.web.card.question"), card.question),
        field(t("modeling.web.card.background"), card.background),
        field(t("modeling.web.card.reply"), card.reply),
        field(t("modeling.web.card.outcome"), card.outcome),
      ),
    };
  }

  verdict(card) {
    return {
      summary: h(
        "span",
        { class: "mt-summary" },
        h("span", { class: "mt-kind" }, t("modeling.web.card.verdict")),
        h("strong", {}, t("modeling.web.card.verdict_title", { gate: word("gate", card.gate), attempt: card.attempt })),
        h("span", { class: ["pill", card.status.toLowerCase()] }, word("status", card.status)),
        h("span", { class: "mt-gist" }, word("decidedBy", card.decided_by)),
      ),
      content: card.reasons.length
        ? h("ul", { class: "mt-reasons" }, card.reasons.map((reason) => h("li", {}, reason)))
        : h("p", { class: ["muted", "small"] }, t("modeling.web.card.no_reasons")),
    };
  }

  script(card) {
    return {
      summary: h(
        "span",
        { class: "mt-summary" },
        h("span", { class: "mt-kind" }, t("modeling.web.card.script")),
        h("strong", {}, card.script),
        h("span", { class: ["pill", card.ok ? "approved" : "rejected"] }, t(card.ok ? "modeling.web.card.ran" : "modeling.web.card.failed", { code: card.returncode })),
      ),
      content: [
        card.error ? h("p", { class: "mt-error" }, card.error) : null,
        card.outputs.length
          ? h("p", { class: "mt-outputs" }, t("modeling.web.card.outputs"), card.outputs.map((path) => h("a", { class: "mt-spaced", href: this.file(path), target: "_blank", rel: "noopener" }, path)))
          : h("p", { class: ["muted", "small"] }, t("modeling.web.card.no_outputs")),
      ],
    };
  }

  drawFiles() {
    if (this.view === undefined) {
      return;
    }
    const files = this.view ? this.view.files : [];
    if (!files.length) {
      this.files.replaceChildren(h("p", { class: ["muted", "small"] }, t("modeling.web.files.empty")));
      return;
    }
    const folders = new Map();
    for (const file of files) {
      folders.set(file.folder, [...(folders.get(file.folder) || []), file]);
    }
    this.files.replaceChildren(
      ...[...folders].map(([folder, list]) =>
        h(
          "div",
          { class: "mt-folder" },
          h("h3", {}, word("folder", folder), h("span", { class: ["muted", "small", "mt-spaced"] }, `${folder}/`)),
          h(
            "ul",
            {},
            list.map((file) =>
              h("li", {}, h("a", { href: this.file(file.path), target: "_blank", rel: "noopener" }, file.path.slice(folder.length + 1)), h("span", { class: ["muted", "small", "mt-spaced"] }, size(file.size))),
            ),
          ),
        ),
      ),
    );
  }
}

function field(label, value) {
  return value ? [h("dt", {}, label), h("dd", {}, value)] : null;
}

function size(bytes) {
  if (bytes < 1024) {
    return t("modeling.web.size.bytes", { n: bytes });
  }
  return bytes < 1024 * 1024 ? t("modeling.web.size.kb", { n: (bytes / 1024).toFixed(1) }) : t("modeling.web.size.mb", { n: (bytes / 1024 / 1024).toFixed(1) });
}
