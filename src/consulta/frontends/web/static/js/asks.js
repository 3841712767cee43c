// What the agent asks of the person: a question form (seed 001 §4.5.3) and a staged plan to approve or reject.

import { api } from "./api.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";

const OTHER = "__other__";

// The question form: one field per question (a select for a single choice, with free text allowed; checkboxes for
// `multiple`; a text field when there are no options), OK and Cancel. `onError(error)` shows a failed call.
export function questionCard(askId, questions, { onError }) {
  const fields = questions.map((question, index) => questionField(askId, question, index));
  const problem = h("p", { class: "form-error", role: "alert", hidden: true });
  const cancel = h("button", { type: "button", class: "ghost" }, t("ai.question.cancel"));
  const ok = h("button", { type: "submit", class: "primary" }, t("ai.question.confirm"));
  const form = h(
    "form",
    { class: "question-form", "aria-labelledby": `${askId}-title`, novalidate: true },
    h("div", { class: "card-title" }, h("span", { class: ["badge", "ask"], "aria-hidden": "true" }, "?"), h("h3", { id: `${askId}-title` }, t("web.question.title"))),
    fields.map((field) => field.node),
    problem,
    h("div", { class: "actions" }, cancel, ok),
  );
  const busy = (on) => {
    form.setAttribute("aria-busy", String(on));
    for (const control of form.querySelectorAll("button,input,select")) {
      control.disabled = on;
    }
  };
  const fail = (error) => {
    if (error.code === "invalid_answer" || error.code === "invalid_request") {
      busy(false);
      problem.hidden = false;
      problem.textContent = t("web.question.invalid", { detail: error.message });
      return;
    }
    busy(error.status === 409); // already closed: its ask_closed event is on its way
    onError(error);
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const answers = fields.map((field) => field.value());
    const missing = fields.findIndex((field, index) => field.required && answers[index].length === 0);
    if (missing >= 0) {
      problem.hidden = false;
      problem.textContent = t("web.question.other_empty");
      fields[missing].focus();
      return;
    }
    busy(true);
    try {
      await api("POST", `/api/asks/${encodeURIComponent(askId)}/answer`, { answers });
    } catch (error) {
      fail(error);
    }
  });
  cancel.addEventListener("click", async () => {
    busy(true);
    try {
      await api("POST", `/api/asks/${encodeURIComponent(askId)}/cancel`);
    } catch (error) {
      fail(error);
    }
  });
  // Enter answers from anywhere in the form (a select does not submit by itself); Shift+Enter does not.
  form.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && event.target.tagName !== "BUTTON") {
      event.preventDefault();
      form.requestSubmit(ok);
    }
  });
  const card = h("li", { class: ["card", "question"], dataset: { askId } }, form);
  card.focusFirst = () => fields[0]?.focus();
  return card;
}

function questionField(askId, question, index) {
  const id = `${askId}-q${index}`;
  const options = question.options || [];
  const label = [h("strong", {}, question.header), t("web.question.separator"), question.question];
  if (options.length && question.multiple) {
    const boxes = options.map((option) => h("input", { type: "checkbox", value: option, name: id }));
    const node = h(
      "fieldset",
      { class: "field" },
      h("legend", {}, label),
      h("p", { class: ["muted", "small"] }, t("web.question.pick_many")),
      boxes.map((box) => h("label", { class: "check" }, box, h("span", {}, box.value))),
    );
    return { node, required: false, value: () => boxes.filter((box) => box.checked).map((box) => box.value), focus: () => boxes[0].focus() };
  }
  if (options.length) {
    const select = h(
      "select",
      { id },
      options.map((option) => h("option", { value: option }, option)),
      h("option", { value: OTHER }, t("web.question.other")),
    );
    const other = h("input", { type: "text", id: `${id}-other`, hidden: true, maxlength: 500, placeholder: t("web.question.other_placeholder"), "aria-label": t("web.question.other_placeholder") });
    select.addEventListener("change", () => {
      other.hidden = select.value !== OTHER;
      if (!other.hidden) {
        other.focus();
      }
    });
    const node = h("div", { class: "field" }, h("label", { for: id }, label), select, other);
    return { node, required: true, value: () => (select.value === OTHER ? other.value.trim() : select.value), focus: () => select.focus() };
  }
  const input = h("input", { type: "text", id, maxlength: 500, autocomplete: "off" });
  const node = h("div", { class: "field" }, h("label", { for: id }, label), input);
  return { node, required: false, value: () => input.value, focus: () => input.focus() };
}

// How a closed question reads in the transcript.
export async function closedQuestion(card, ask) {
  const status = ask.status;
  let text;
  if (status === "answered") {
    let answers = [];
    try {
      const record = await api("GET", `/api/asks/${encodeURIComponent(ask.ask_id)}`);
      answers = record.outcome?.result?.answers || [];
    } catch (error) {
      answers = [];
    }
    text = t("web.question.answered", { answers: answers.join(t("web.list_separator")) });
  } else if (status === "timed_out") {
    text = t("web.question.timeout");
  } else if (status === "cancelled") {
    text = t("web.question.cancelled");
  } else {
    text = t("web.question.declined");
  }
  const tone = status === "answered" ? "ok" : "muted";
  card.replaceChildren(
    h("div", { class: "card-title" }, h("span", { class: ["badge", tone], "aria-hidden": "true" }, status === "answered" ? "✓" : "–"), h("h3", {}, t("web.question.title"))),
    h("p", { class: ["closed-note", status] }, text),
  );
  card.classList.add("closed");
}

// A staged plan: its previews, and Approve / Reject once its ask is open.
export function planCard(planId, items, { onError }) {
  const approve = h("button", { type: "button", class: "primary", disabled: true }, t("web.plan.approve"));
  const reject = h("button", { type: "button", class: "ghost", disabled: true }, t("web.plan.reject"));
  const status = h("p", { class: "plan-status", hidden: true });
  const card = h(
    "li",
    { class: ["card", "plan"], dataset: { planId } },
    h("div", { class: "card-title" }, h("span", { class: ["badge", "plan"], "aria-hidden": "true" }, "!"), h("h3", {}, t("web.plan.title"))),
    h("p", { class: ["muted", "small"] }, t("web.plan.intro")),
    h("ol", { class: "previews" }, items.map((item) => h("li", {}, item.preview))),
    status,
    h("div", { class: "actions" }, reject, approve),
  );
  let askId = null;
  const decide = async (decision) => {
    approve.disabled = reject.disabled = true;
    try {
      await api("POST", `/api/asks/${encodeURIComponent(askId)}/answer`, { decision });
    } catch (error) {
      approve.disabled = reject.disabled = false;
      onError(error);
    }
  };
  approve.addEventListener("click", () => decide("approve"));
  reject.addEventListener("click", () => decide("reject"));
  card.open = (id) => {
    askId = id;
    approve.disabled = reject.disabled = false;
  };
  card.close = () => {
    approve.disabled = reject.disabled = true;
  };
  card.decided = (decision) => {
    card.close();
    card.querySelector(".actions").hidden = true;
    status.hidden = false;
    status.classList.add(decision.status);
    status.textContent = planOutcome(decision);
  };
  return card;
}

function planOutcome(decision) {
  const result = decision.result || {};
  switch (decision.status) {
    case "applied":
      return t("web.plan.applied", { audit_ids: (result.audit_ids || []).join(t("web.list_separator")) });
    case "rejected":
      return t("web.plan.rejected");
    case "failed":
      return t("web.plan.failed", { message: result.message || "" });
    default:
      return t("web.plan.cancelled");
  }
}
