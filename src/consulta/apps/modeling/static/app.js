// The modeling app's panels on the web page: a live timeline of a run — the four gates as phases, who is working
// now, each consultation as a card that opens to its markdown record, each gate's verdict with its reasons, the
// team's script runs — with the paper's PDF and the files produced, drawn from GET /api/modeling/timeline and redrawn
// as the run's events arrive (the page hands every event of the runs it shows to `event`). An escalation is a
// question of the Director's run: the page's own ask form answers it.

import { api } from "/static/js/api.js";
import { h } from "/static/js/dom.js";
import { formatTime, t } from "/static/js/i18n.js";

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
    ready: timeline.refresh(),
    event: (event) => timeline.heard(event),
    redraw: () => timeline.draw(),
  };
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
