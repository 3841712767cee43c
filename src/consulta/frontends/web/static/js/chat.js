// The conversation: each run's events, as they arrive, drawn into the transcript. The transcript is a function of
// the events, so a reload (or a language switch) draws it again from the server's replay.
//
// A person reads their own message, then the reply of the agent that speaks to them. A turn may pass through several
// agents (the app's hand-over): a run started by a hand-over (`handed`) shows no prompt as the person's (it is the
// previous agent's note), and a run that handed its turn over shows no reply (its work shows as its tool calls and
// cards). So a reply is held until the run goes on, or its stream ends without a `handed_over` (see finish()).
//
// While the model writes its reply, the words arrive as drafts (`text_delta`) and show in a bubble marked as being
// written. A draft is provisional: the reply (`model_text`, after the runtime's checks) replaces it in place, and
// any other event of the run (a tool call, a new step, a refusal, the end) removes it; a draft a check refused
// (`reply_checked`) leaves a note that it was withdrawn.

import { closedQuestion, planCard, questionCard } from "./asks.js";
import { h, json } from "./dom.js";
import { has, t } from "./i18n.js";

const APP = document.body.dataset.app || "";

// A step in the person's words: the app declares them per tool (`<app>.step.<tool>`, and `<app>.step.<tool>.detail`
// with {arg} placeholders, used when the call has every one of them; an argument's value may have words of its own,
// `<app>.step.value.<value>`). A tool the app gave no words gets a generic line; its name is in the details only.
export function stepWords(tool, args) {
  const detail = `${APP}.step.${tool}.detail`;
  if (has(detail)) {
    const values = {};
    const names = [...t(detail).matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
    for (const name of names) {
      const value = args && typeof args === "object" ? args[name] : undefined;
      const plain = Array.isArray(value) ? value.join(t("web.list_separator")) : value;
      if (plain === undefined || plain === null || plain === "" || typeof plain === "object") {
        values[name] = null;
        continue;
      }
      const own = `${APP}.step.value.${plain}`;
      values[name] = has(own) ? t(own) : String(plain);
    }
    if (Object.values(values).every((value) => value !== null)) {
      return t(detail, values);
    }
  }
  return has(`${APP}.step.${tool}`) ? t(`${APP}.step.${tool}`) : t("web.step.generic");
}

function seconds(ms) {
  const value = ms / 1000;
  return t("web.step.seconds", { seconds: value < 10 ? value.toFixed(1) : String(Math.round(value)) });
}

// A clock shown in `node` while something runs: whole seconds since it started, every second.
function ticking(node, format) {
  const started = performance.now();
  const show = () => {
    node.textContent = format(Math.floor((performance.now() - started) / 1000));
  };
  show();
  const timer = setInterval(show, 1000);
  return () => clearInterval(timer);
}

export class RunView {
  constructor(runId, { transcript, thinking, onError, onPlanApplied, onChange, handed = false }) {
    this.runId = runId;
    this.handed = handed;
    this.transcript = transcript;
    this.thinking = thinking;
    this.onError = onError;
    this.onPlanApplied = onPlanApplied;
    this.onChange = onChange;
    this.reset();
  }

  reset() {
    for (const node of this.nodes || []) {
      node.remove();
    }
    this.stopClocks();
    this.nodes = [];
    this.tools = new Map();
    this.asks = new Map();
    this.plans = new Map();
    this.status = "running";
    this.step = 0;
    this.replaying = true;
    this.reply = null; // the run's reply, held until the run goes on or its stream ends
    this.draft = null; // the reply being written: {node, bubble, text}
    this.handedOver = false;
    this.showThinking(false);
  }

  add(node) {
    this.nodes.push(node);
    this.transcript.append(node);
    node.scrollIntoView({ block: "end", behavior: this.replaying ? "auto" : "smooth" });
    return node;
  }

  stopClocks() {
    for (const tool of this.tools?.values() || []) {
      tool.stopClock?.();
    }
  }

  get ended() {
    return this.status !== "running";
  }

  showThinking(on) {
    this.thinking.hidden = !on;
    this.stopThinkingClock?.();
    this.stopThinkingClock = null;
    if (on) {
      const text = this.thinking.querySelector("#thinking-text");
      this.stopThinkingClock = ticking(text, (elapsed) => t("web.chat.thinking", { seconds: elapsed }));
    }
  }

  handle(event) {
    if (event.type === "text_delta") {
      this.drafted(event);
      this.onChange(this);
      return;
    }
    if (event.type !== "run_ended" && event.type !== "handed_over") {
      this.drawReply(); // the run went on after its reply: it stands
    }
    if (event.type !== "model_text" && this.reply === null) {
      const withdrawn = event.type === "reply_checked" && this.draft !== null;
      this.dropDraft(); // the words being written were not the reply (a tool call came, or a check refused them)
      if (withdrawn) {
        // Words the person may have started reading leave the page: say so, in the draft's place.
        this.add(h("li", { class: ["note", "muted", "withdrawn"] }, t("web.reply.withdrawn")));
      }
    }
    switch (event.type) {
      case "run_started":
        if (!event.resumed && !this.handed) {
          this.add(h("li", { class: ["msg", "user"] }, h("div", { class: "bubble" }, event.prompt)));
        }
        break;
      case "step_started":
        this.step = event.step;
        this.showThinking(true);
        break;
      case "tool_called":
        this.toolCalled(event);
        break;
      case "tool_returned":
        this.toolReturned(event);
        break;
      case "model_text":
        this.showThinking(false);
        this.reply = event.text;
        if (this.draft) {
          this.draft.bubble.textContent = event.text; // the checked reply replaces the draft at once
        }
        break;
      case "handed_over":
        this.handedOver = true;
        this.reply = null;
        this.dropDraft();
        break;
      case "ask_opened":
        this.showThinking(false);
        this.askOpened(event);
        break;
      case "ask_closed":
        this.askClosed(event);
        break;
      case "plan_staged":
        this.showThinking(false);
        this.plans.set(event.plan_id, this.add(planCard(event.plan_id, event.items, { onError: this.onError })));
        break;
      case "plan_decided":
        this.plans.get(event.plan_id)?.decided(event);
        if (event.status === "applied") {
          this.onPlanApplied(event);
        }
        break;
      case "run_ended":
        this.runEnded(event);
        break;
      default:
        break;
    }
    this.onChange(this);
  }

  // A tool call is a step in the person's words with its time; the tool's name, arguments and result (a refusal the
  // model must handle included) are behind the step's details, for developers.
  toolCalled(event) {
    if (event.tool_name === "question") {
      this.add(h("li", { class: ["note", "asking"] }, t("web.question.asking")));
      return;
    }
    const state = h("span", { class: ["tool-state", "running"], "aria-hidden": "true" });
    const time = h("span", { class: "step-time" });
    const words = h("span", { class: "step-text" }, stepWords(event.tool_name, event.args));
    const body = h(
      "div",
      { class: "tool-body" },
      h("p", { class: "tool-label" }, t("web.step.tool")),
      h("code", { class: "tool-name" }, event.tool_name),
      h("p", { class: "tool-label" }, t("web.tool.args")),
      h("pre", {}, json(event.args)),
    );
    const node = this.add(
      h("li", { class: "tool" }, h("details", {}, h("summary", { title: t("web.step.details") }, state, words, time), body)),
    );
    const stopClock = this.replaying ? null : ticking(time, (elapsed) => t("web.step.seconds", { seconds: elapsed }));
    this.tools.set(event.tool_call_id, { node, state, time, words, body, stopClock });
  }

  toolReturned(event) {
    const tool = this.tools.get(event.tool_call_id);
    if (!tool) {
      return;
    }
    tool.stopClock?.();
    tool.state.classList.remove("running");
    tool.state.classList.add(event.ok ? "ok" : "set-aside");
    tool.time.textContent = seconds(event.duration_ms || 0);
    if (!event.ok) {
      // Refused or failed: part of the model's work (it reads why and carries on), not an error for the person.
      tool.words.append(h("span", { class: "step-note" }, t("web.step.set_aside")));
    }
    tool.body.append(h("p", { class: "tool-label" }, t("web.tool.result")), h("pre", {}, json(event.result)));
  }

  askOpened(event) {
    if (event.kind === "plan") {
      const card = this.plans.get(event.payload.plan_id);
      card?.open(event.ask_id);
      this.asks.set(event.ask_id, { kind: "plan", card });
      return;
    }
    const card = this.add(questionCard(event.ask_id, event.payload.questions || [], { onError: this.onError }));
    this.asks.set(event.ask_id, { kind: event.kind, card });
    if (!this.replaying) {
      card.focusFirst();
    }
  }

  askClosed(event) {
    const ask = this.asks.get(event.ask_id);
    if (!ask || !ask.card) {
      return;
    }
    if (ask.kind === "plan") {
      ask.card.close();
      return;
    }
    closedQuestion(ask.card, event);
  }

  runEnded(event) {
    this.status = event.status;
    this.showThinking(false);
    this.stopClocks();
    if (event.status === "failed") {
      this.add(h("li", { class: ["note", "error"] }, t("web.run.failed", { error: event.error || "" })));
    } else if (event.status === "cancelled") {
      this.add(h("li", { class: ["note", "muted"] }, t("web.run.stopped")));
    }
  }

  // Words of the reply as they are written: appended at their offset, or the draft started again (offset 0).
  drafted(event) {
    const text = this.draft?.text ?? "";
    let next;
    if (event.offset === 0) {
      next = event.text;
    } else if (event.offset === text.length) {
      next = text + event.text;
    } else {
      return; // a draft missed in part (a reconnect): the reply itself will come
    }
    if (!this.draft) {
      const bubble = h("div", { class: "bubble" });
      const node = this.add(h("li", { class: ["msg", "agent", "draft"], "aria-busy": "true" }, bubble));
      this.draft = { node, bubble, text: "" };
    }
    this.showThinking(false);
    this.draft.text = next;
    this.draft.bubble.textContent = next;
    this.draft.node.scrollIntoView({ block: "end" });
  }

  dropDraft() {
    if (this.draft) {
      this.draft.node.remove();
      this.nodes = this.nodes.filter((node) => node !== this.draft.node);
      this.draft = null;
    }
  }

  drawReply() {
    if (this.reply === null) {
      return;
    }
    if (this.draft) {
      this.draft.bubble.textContent = this.reply;
      this.draft.node.classList.remove("draft");
      this.draft.node.removeAttribute("aria-busy");
      this.draft = null;
    } else {
      this.add(h("li", { class: ["msg", "agent"] }, h("div", { class: "bubble" }, this.reply)));
    }
    this.reply = null;
  }

  // The run's stream has ended: its reply is shown unless it handed its turn over.
  finish() {
    if (!this.handedOver) {
      this.drawReply();
    }
  }

  // The replay has been drawn: a question still open gets the focus.
  caughtUp() {
    this.replaying = false;
    for (const ask of this.asks.values()) {
      if (ask.kind !== "plan" && ask.card.isConnected && !ask.card.classList.contains("closed")) {
        ask.card.focusFirst();
      }
    }
  }
}
