// The conversation: each run's events, as they arrive, drawn into the transcript. The transcript is a function of
// the events, so a reload (or a language switch) draws it again from the server's replay.
//
// A person reads their own message, then the reply of the agent that speaks to them. A turn may pass through several
// agents (the app's hand-over): a run started by a hand-over (`handed`) shows no prompt as the person's (it is the
// previous agent's note), and a run that handed its turn over shows no reply (its work shows as its tool calls and
// cards). So a reply is held until the run goes on, or its stream ends without a `handed_over` (see finish()).

import { closedQuestion, planCard, questionCard } from "./asks.js";
import { h, json } from "./dom.js";
import { t } from "./i18n.js";

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
    this.nodes = [];
    this.tools = new Map();
    this.asks = new Map();
    this.plans = new Map();
    this.status = "running";
    this.step = 0;
    this.replaying = true;
    this.reply = null; // the run's reply, held until the run goes on or its stream ends
    this.handedOver = false;
    this.showThinking(false);
  }

  add(node) {
    this.nodes.push(node);
    this.transcript.append(node);
    node.scrollIntoView({ block: "end", behavior: this.replaying ? "auto" : "smooth" });
    return node;
  }

  get ended() {
    return this.status !== "running";
  }

  showThinking(on) {
    this.thinking.hidden = !on;
    if (on) {
      this.thinking.querySelector("#thinking-text").textContent = t("web.chat.thinking", { step: this.step });
    }
  }

  handle(event) {
    if (event.type !== "run_ended" && event.type !== "handed_over") {
      this.drawReply(); // the run went on after its reply: it stands
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
        break;
      case "handed_over":
        this.handedOver = true;
        this.reply = null;
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

  toolCalled(event) {
    if (event.tool_name === "question") {
      this.add(h("li", { class: ["note", "asking"] }, t("web.question.asking")));
      return;
    }
    const badge = h("span", { class: ["tool-state", "running"] }, t("web.tool.running"));
    const body = h("div", { class: "tool-body" }, h("p", { class: "tool-label" }, t("web.tool.args")), h("pre", {}, json(event.args)));
    const node = this.add(
      h(
        "li",
        { class: "tool" },
        h("details", {}, h("summary", {}, h("span", { class: "tool-name" }, event.tool_name), badge), body),
      ),
    );
    this.tools.set(event.tool_call_id, { node, badge, body });
  }

  toolReturned(event) {
    const tool = this.tools.get(event.tool_call_id);
    if (!tool) {
      return;
    }
    const result = event.result || {};
    tool.badge.classList.remove("running");
    tool.badge.classList.add(event.ok ? "ok" : "failed");
    tool.badge.textContent = event.ok ? t("web.tool.ok") : t("web.tool.failed", { code: result.error_code || "" });
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
    if (event.status === "failed") {
      this.add(h("li", { class: ["note", "error"] }, t("web.run.failed", { error: event.error || "" })));
    } else if (event.status === "cancelled") {
      this.add(h("li", { class: ["note", "muted"] }, t("web.run.stopped")));
    }
  }

  drawReply() {
    if (this.reply !== null) {
      this.add(h("li", { class: ["msg", "agent"] }, h("div", { class: "bubble" }, this.reply)));
      this.reply = null;
    }
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
