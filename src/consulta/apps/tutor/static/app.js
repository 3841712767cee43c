// The tutor's panels on the web page: the student's uploads (a file picked is checked against the server's limits,
// then sent as multipart/form-data to POST /api/tutor/uploads), and the cards of the turn — the instruction packet
// and each consultation with the binding rules that fired — drawn from GET /api/tutor/turn and redrawn as the
// turn's events arrive (the page hands every event of the runs it shows to `event`).

import { api } from "/static/js/api.js";
import { h } from "/static/js/dom.js";
import { formatTime, has, lang, t } from "/static/js/i18n.js";

const $ = (selector) => document.querySelector(selector);

const TURN_TOOLS = new Set(["consult_expert", "submit_instruction_packet"]);

export function mount({ onError }) {
  const tutor = new Tutor({
    input: $("#upload-input"),
    hint: $("#upload-hint"),
    status: $("#upload-status"),
    list: $("#upload-list"),
    state: $("#turn-state"),
    cards: $("#turn-cards"),
    onError,
  });
  tutor.input.addEventListener("change", () => {
    const file = tutor.input.files[0];
    tutor.input.value = "";
    if (file) {
      tutor.upload(file);
    }
  });
  // A file dropped on the panel is uploaded like a file picked.
  const zone = $("#uploads");
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("dropping");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("dropping"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("dropping");
    const file = event.dataTransfer?.files[0];
    if (file) {
      tutor.upload(file);
    }
  });
  return {
    ready: Promise.all([tutor.refreshUploads(), tutor.refreshTurn(null)]),
    event: (event) => tutor.heard(event),
    redraw: () => tutor.draw(),
  };
}

export class Tutor {
  constructor({ input, hint, status, list, state, cards, onError }) {
    Object.assign(this, { input, hint, status, list, state, cards, onError });
    this.uploads = null; // GET /api/tutor/uploads: files, max_bytes, accepted
    this.turn = undefined; // GET /api/tutor/turn (null: no turn yet; undefined: not read yet)
    this.notice = null; // the upload line: { key, values, tone }
    this.asked = 0; // the newest turn request; older answers are dropped
  }

  draw() {
    this.drawUploads();
    this.drawNotice();
    this.drawTurn();
  }

  // ---- uploads ------------------------------------------------------------------------------------------------------

  async refreshUploads() {
    this.uploads = await api("GET", "/api/tutor/uploads");
    this.drawUploads();
  }

  drawUploads() {
    if (!this.uploads) {
      return;
    }
    const { files, max_bytes: max, accepted } = this.uploads;
    this.input.accept = accepted.join(",");
    this.hint.textContent = t("tutor.web.uploads.hint", { types: accepted.join(t("web.list_separator")), limit: size(max) });
    if (!files.length) {
      this.list.replaceChildren(h("li", { class: "muted" }, t("tutor.web.uploads.empty")));
      return;
    }
    this.list.replaceChildren(
      ...files.map((file) =>
        h(
          "li",
          { class: "upload", dataset: { name: file.name } },
          h("span", { class: "upload-name" }, file.name),
          h("span", { class: "upload-meta" }, t("tutor.web.uploads.meta", { size: size(file.size), when: formatTime(file.modified) })),
        ),
      ),
    );
  }

  say(key, values, tone) {
    this.notice = { key, values, tone };
    this.drawNotice();
  }

  drawNotice() {
    const notice = this.notice;
    this.status.hidden = !notice;
    if (notice) {
      setTone(this.status, notice.tone, ["good", "bad", "busy"]);
      this.status.setAttribute("role", notice.tone === "bad" ? "alert" : "status");
      this.status.textContent = t(notice.key, notice.values);
    }
  }

  // The server's own limits, checked before a byte is sent (the server checks them again).
  refusal(file) {
    const { max_bytes: max, accepted } = this.uploads;
    const dot = file.name.lastIndexOf(".");
    const suffix = dot > 0 ? file.name.slice(dot).toLowerCase() : "";
    if (!accepted.includes(suffix)) {
      return "unsupported_file_type";
    }
    if (file.size > max) {
      return "file_too_large";
    }
    return file.size === 0 ? "empty_file" : null;
  }

  async upload(file) {
    if (!this.uploads) {
      await this.refreshUploads();
    }
    const values = { name: file.name, limit: size(this.uploads.max_bytes), types: this.uploads.accepted.join(t("web.list_separator")) };
    const refused = this.refusal(file);
    if (refused) {
      this.say(errorKey(refused), values, "bad");
      return;
    }
    this.say("tutor.web.uploads.sending", values, "busy");
    const form = new FormData();
    form.append("file", file, file.name);
    let response;
    try {
      response = await fetch("/api/tutor/uploads", { method: "POST", body: form, credentials: "same-origin" });
    } catch (error) {
      this.say("web.error.network", { detail: "" }, "bad");
      return;
    }
    const body = response.headers.get("content-type")?.includes("json") ? await response.json() : {};
    if (!response.ok) {
      this.say(errorKey(body.error_code), { ...values, detail: body.message || String(response.status) }, "bad");
      return;
    }
    this.say("tutor.web.uploads.done", { name: body.name, size: size(body.size) }, "good");
    await this.refreshUploads().catch(this.onError);
  }

  // ---- the turn's cards ---------------------------------------------------------------------------------------------

  // An event of a run the page shows: the turn's cards follow its start, its consultations, its packet, the
  // hand-over and its end (the server finds the turn of the assistant's run too).
  heard(event) {
    const started = event.type === "run_started" && !event.resumed;
    const called = event.type === "tool_returned" && TURN_TOOLS.has(event.tool_name);
    if (started || called || event.type === "handed_over" || event.type === "run_ended") {
      this.refreshTurn(event.run_id);
    }
  }

  async refreshTurn(runId) {
    const asked = ++this.asked;
    const query = runId ? `?run_id=${encodeURIComponent(runId)}` : "";
    let turn;
    try {
      turn = await api("GET", `/api/tutor/turn${query}`);
    } catch (error) {
      this.onError(error);
      return;
    }
    if (asked === this.asked && JSON.stringify(turn) !== JSON.stringify(this.turn)) {
      this.turn = turn; // drawn again only when it changed: the cards stay put while the turn's events go by
      this.drawTurn();
    }
  }

  drawTurn() {
    const turn = this.turn;
    const state = turnState(turn);
    setTone(this.state, state, Object.keys(TURN_STATES));
    this.state.textContent = t(TURN_STATES[state]);
    if (!turn) {
      this.cards.replaceChildren(h("p", { class: "muted" }, t("tutor.web.turn.empty")));
      return;
    }
    const cards = [
      turn.prompt ? h("p", { class: "turn-prompt" }, t("tutor.web.turn.prompt", { prompt: turn.prompt })) : null,
      turn.packet ? packetCard(turn.packet) : null,
      ...turn.consultations.map(consultationCard),
    ].filter(Boolean);
    if (!turn.packet && !turn.consultations.length) {
      cards.push(h("p", { class: "muted" }, t(state === "working" ? "tutor.web.turn.working_empty" : "tutor.web.turn.nothing")));
    }
    this.cards.replaceChildren(...cards);
  }
}

// ---- cards ------------------------------------------------------------------------------------------------------------

const TURN_STATES = {
  none: "tutor.web.turn.state.none",
  working: "tutor.web.turn.state.working",
  answered: "tutor.web.turn.state.answered",
  failed: "tutor.web.turn.state.failed",
  ended: "tutor.web.turn.state.ended",
};

function turnState(turn) {
  if (!turn) {
    return "none";
  }
  const last = turn.assistant_status || turn.status;
  if (last === "running" || last === "waiting" || (turn.status === "finished" && !turn.assistant_status && turn.packet?.accepted)) {
    return "working";
  }
  if (last === "failed" || last === "stopped") {
    return "failed";
  }
  return turn.assistant_status === "finished" ? "answered" : "ended";
}

const TASK_STATUS = {
  not_started: "tutor.web.task_status.not_started",
  in_progress: "tutor.web.task_status.in_progress",
  blocked: "tutor.web.task_status.blocked",
  done: "tutor.web.task_status.done",
};

// The packet's fields, as the packet card and the instruction updates name them.
const FIELDS = {
  task_status: "tutor.web.packet.task_status",
  guidance_for_ca: "tutor.web.packet.guidance",
  mention_to_student: "tutor.web.packet.mention",
  blocked_steps: "tutor.web.packet.blocked",
};

const OUTPUT_TYPES = {
  suitability_judgment: "tutor.web.output.suitability_judgment",
  concept_explanation: "tutor.web.output.concept_explanation",
  error_diagnosis: "tutor.web.output.error_diagnosis",
  validation_report: "tutor.web.output.validation_report",
};

const EXPERTS = {
  data_inspector: "tutor.web.expert.data_inspector",
  concept_explainer: "tutor.web.expert.concept_explainer",
};

const VERDICTS = {
  suitable: ["tutor.web.verdict.suitable", "good"],
  not_suitable: ["tutor.web.verdict.not_suitable", "bad"],
  valid: ["tutor.web.verdict.valid", "good"],
  not_valid: ["tutor.web.verdict.not_valid", "bad"],
  explained: ["tutor.web.verdict.explained", "info"],
  diagnosed: ["tutor.web.verdict.diagnosed", "info"],
  failed: ["tutor.web.verdict.failed", "bad"],
};

function named(map, key) {
  return map[key] ? t(map[key]) : key;
}

function pill(text, tone) {
  return h("span", { class: ["pill", tone] }, text);
}

function items(values, cls) {
  return h("ul", { class: cls }, values.map((value) => h("li", {}, value)));
}

function row(label, ...value) {
  return [h("dt", {}, label), h("dd", {}, ...value)];
}

function packetCard(packet) {
  const status = packet.task_status ? pill(named(TASK_STATUS, packet.task_status), packet.task_status === "blocked" ? "bad" : "info") : null;
  const rows = [
    packet.task_id ? row(t("tutor.web.packet.task"), h("code", {}, packet.task_id), status) : null,
    packet.guidance_for_ca ? row(t(FIELDS.guidance_for_ca), packet.guidance_for_ca) : null,
    packet.mention_to_student.length ? row(t(FIELDS.mention_to_student), items(packet.mention_to_student, "plain")) : null,
    packet.blocked_steps.length ? row(t(FIELDS.blocked_steps), packet.blocked_steps.map((step) => pill(step, "bad"))) : null,
    packet.consultation_ids.length ? row(t("tutor.web.packet.rests_on"), packet.consultation_ids.map((id) => h("code", {}, id))) : null,
  ];
  return h(
    "article",
    { class: ["card", "packet", packet.accepted ? "accepted" : "refused"] },
    h(
      "header",
      {},
      h("h3", {}, t("tutor.web.packet.title")),
      pill(t(packet.accepted ? "tutor.web.packet.accepted" : "tutor.web.packet.refused"), packet.accepted ? "good" : "bad"),
    ),
    packet.refusal ? h("p", { class: "refusal" }, t("tutor.web.packet.refusal", { reason: packet.refusal })) : null,
    h("dl", { class: "fields" }, rows.filter(Boolean)),
  );
}

function updateValue(value) {
  if (Array.isArray(value)) {
    return items(value.map(String), "plain");
  }
  return typeof value === "string" ? named(TASK_STATUS, value) : JSON.stringify(value);
}

function consultationCard(card) {
  const [verdictKey, tone] = VERDICTS[card.verdict] || [card.verdict, "info"];
  const rules = card.binding_rules.length
    ? items(
        card.binding_rules.map((rule) => t("tutor.web.consultation.rule", { rule: rule.rule_name, action: rule.action })),
        "rules",
      )
    : h("p", { class: "muted" }, t("tutor.web.consultation.no_rules"));
  const updates = Object.entries(card.instruction_updates);
  return h(
    "article",
    { class: ["card", "consultation"], dataset: { id: card.id } },
    h(
      "header",
      {},
      h("h3", {}, t("tutor.web.consultation.title", { expert: named(EXPERTS, card.expert_id), output: named(OUTPUT_TYPES, card.output_type) })),
      pill(t(verdictKey), tone),
    ),
    h("p", { class: "question" }, card.question),
    card.summary ? h("p", { class: "summary" }, card.summary) : null,
    card.issues.length ? [h("h4", {}, t("tutor.web.consultation.issues")), items(card.issues, "issues")] : null,
    card.warnings.length ? [h("h4", {}, t("tutor.web.consultation.warnings")), items(card.warnings, "warnings")] : null,
    card.evidence.length ? [h("h4", {}, t("tutor.web.consultation.evidence")), items(card.evidence, "evidence")] : null,
    h("div", { class: "binding" }, h("h4", {}, t("tutor.web.consultation.rules")), rules),
    updates.length
      ? h(
          "div",
          { class: "updates" },
          h("h4", {}, t("tutor.web.consultation.updates")),
          h("dl", { class: "fields" }, updates.map(([key, value]) => row(named(FIELDS, key), updateValue(value)))),
        )
      : null,
    h("p", { class: "meta" }, t("tutor.web.consultation.meta", { id: card.id, ms: Math.round(card.duration_ms) })),
  );
}

// The one class of `tones` that `node` shows.
function setTone(node, tone, tones) {
  node.classList.remove(...tones);
  node.classList.add(tone);
}

// ---- words --------------------------------------------------------------------------------------------------------------

// An upload error's words: the tutor's own for its codes, else the page's general line.
function errorKey(code) {
  const key = `tutor.web.error.${code}`;
  return has(key) ? key : "web.error.generic";
}

// A size in the reader's language (the browser's own unit names).
function size(bytes) {
  const [unit, value] = bytes >= 1024 * 1024 ? ["megabyte", bytes / (1024 * 1024)] : ["kilobyte", Math.max(bytes / 1024, 0.1)];
  return new Intl.NumberFormat(lang(), { style: "unit", unit, maximumFractionDigits: 1 }).format(value);
}
