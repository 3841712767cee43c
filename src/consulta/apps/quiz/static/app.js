// quiz's panel on the web page: a person takes an adaptive test. The profile (the seed's fields) starts a test; its
// items come one at a time (POST /api/quiz/tests/{id}/answers gives the feedback and the next item); the end shows
// θ ± SE, the plot of the estimate after each item (GET …/plot.svg) and every item reviewed. The test lives on the
// server: a reload, or a browser closed and opened again, comes back to the item shown (GET /api/quiz/tests/current).

import { api } from "/static/js/api.js";
import { h } from "/static/js/dom.js";
import { lang, t } from "/static/js/i18n.js";

const $ = (selector) => document.querySelector(selector);
const RESULT = "consulta.quiz.result"; // the finished test to show again after a reload
const CATEGORY = { technical: "quiz.web.category.technical", business: "quiz.web.category.business", general: "quiz.web.category.general" };
const TRUTH = { true: "quiz.web.true", false: "quiz.web.false" };
const STOP = {
  se_target: "quiz.web.stop.se_target",
  max_items: "quiz.web.stop.max_items",
  bank_exhausted: "quiz.web.stop.bank_exhausted",
};

export function mount({ onError }) {
  const quiz = new Quiz(onError);
  $("#quiz-profile").addEventListener("submit", (event) => {
    event.preventDefault();
    quiz.start();
  });
  $("#quiz-item").addEventListener("submit", (event) => {
    event.preventDefault();
    quiz.answer();
  });
  $("#quiz-next").addEventListener("click", () => quiz.next());
  $("#quiz-again").addEventListener("click", () => quiz.again());
  $("#quiz-restart").addEventListener("click", () => quiz.restart());
  return { ready: quiz.load(), redraw: () => quiz.draw() };
}

// The API's path with the reader's language, so that an error comes back in their words.
function path(route) {
  return `/api/quiz${route}${route.includes("?") ? "&" : "?"}lang=${encodeURIComponent(lang())}`;
}

function number(value, digits = 2) {
  return Number(value).toFixed(digits);
}

function signed(value) {
  const text = number(value);
  return value >= 0 ? `+${text}` : text;
}

export class Quiz {
  constructor(onError) {
    this.onError = onError;
    this.mode = "loading"; // profile | item | feedback | result
    this.test = null; // the SessionView shown
    this.feedback = null; // the feedback of the answer just given (mode feedback)
    this.answered = null; // the item it answered
    this.profile = null; // the profile saved last, to fill the form with
    this.error = null; // { message } shown above the panel's content
    this.busy = false;
  }

  async load() {
    const current = await api("GET", path("/tests/current"));
    if (current) {
      this.show(current);
      return;
    }
    const finished = localStorage.getItem(RESULT);
    if (finished) {
      try {
        const test = await api("GET", path(`/tests/${encodeURIComponent(finished)}`));
        if (test.status === "finished") {
          this.show(test);
          return;
        }
      } catch (error) {
        localStorage.removeItem(RESULT); // a test of another session, or gone
      }
    }
    await this.toProfile();
  }

  async toProfile() {
    const saved = await api("GET", path("/profile"));
    this.profile = saved.profile;
    this.test = null;
    this.mode = "profile";
    this.fillProfile();
    this.draw();
  }

  show(test) {
    this.test = test;
    this.mode = test.status === "in_progress" ? "item" : "result";
    if (test.status === "finished") {
      localStorage.setItem(RESULT, test.id);
    }
    this.draw();
  }

  fail(error) {
    if (error.status === 401 || error.status === 0) {
      this.onError(error);
      return;
    }
    this.error = { message: error.message };
    this.drawError();
  }

  clearError() {
    this.error = null;
    this.drawError();
  }

  async call(work) {
    if (this.busy) {
      return;
    }
    this.busy = true;
    this.drawBusy();
    try {
      await work();
    } catch (error) {
      this.fail(error);
    } finally {
      this.busy = false;
      $("#quiz-grading").hidden = true;
      this.drawBusy();
    }
  }

  // ---- actions --------------------------------------------------------------------------------------------------

  readProfile() {
    const interests = $("#quiz-interests")
      .value.split(/[,\uff0c\u3001;\uff1b]/)
      .map((s) => s.trim())
      .filter(Boolean);
    const years = $("#quiz-years").value.trim();
    return {
      self_level: $("#quiz-level").value,
      years_experience: years === "" ? null : Number(years),
      job_role: $("#quiz-role").value,
      duty: $("#quiz-duty").value,
      interests,
    };
  }

  start(replace = false) {
    return this.call(async () => {
      const body = { profile: this.readProfile(), lang: lang(), replace_open: replace };
      const test = await api("POST", path("/tests"), body);
      localStorage.removeItem(RESULT);
      this.clearError();
      this.show(test);
    });
  }

  chosenAnswer() {
    const item = this.test.item;
    if (item.item_type === "short_answer") {
      return $("#quiz-text").value;
    }
    const picked = document.querySelector('input[name="quiz-choice"]:checked');
    return picked ? picked.value : "";
  }

  answer() {
    const item = this.test.item;
    $("#quiz-grading").hidden = item.item_type !== "short_answer"; // a short answer is graded by the model: it takes a while
    return this.call(async () => {
      const body = { position: item.position, question_id: item.question_id, answer: this.chosenAnswer() };
      const result = await api("POST", path(`/tests/${encodeURIComponent(this.test.id)}/answers`), body);
      this.clearError();
      this.test = result.session;
      this.feedback = result.feedback;
      this.answered = item;
      this.mode = "feedback";
      if (this.test.status === "finished") {
        localStorage.setItem(RESULT, this.test.id);
      }
      this.draw();
    });
  }

  next() {
    this.feedback = null;
    this.show(this.test);
    $(this.mode === "item" ? "#quiz-item" : "#quiz-result")
      .querySelector("input,textarea,button")
      ?.focus();
  }

  again() {
    localStorage.removeItem(RESULT);
    this.call(() => this.toProfile());
  }

  restart() {
    if (!this.test || this.test.status !== "in_progress") {
      return;
    }
    this.call(async () => {
      await api("POST", path(`/tests/${encodeURIComponent(this.test.id)}/abandon`));
      await this.toProfile();
    });
  }

  // ---- drawing --------------------------------------------------------------------------------------------------

  draw() {
    const sections = { profile: "#quiz-profile", item: "#quiz-item", feedback: "#quiz-feedback", result: "#quiz-result" };
    for (const [mode, selector] of Object.entries(sections)) {
      $(selector).hidden = this.mode !== mode;
    }
    document.getElementById("quiz").dataset.mode = this.mode;
    this.drawStatus();
    this.drawError();
    if (this.mode === "item") {
      this.drawItem();
    } else if (this.mode === "feedback") {
      this.drawFeedback();
    } else if (this.mode === "result") {
      this.drawResult();
    }
    this.drawBusy();
  }

  drawError() {
    $("#quiz-error").hidden = !this.error;
    $("#quiz-error").textContent = this.error ? this.error.message : "";
  }

  drawBusy() {
    for (const id of ["#quiz-start", "#quiz-submit", "#quiz-next", "#quiz-again", "#quiz-restart"]) {
      $(id).disabled = this.busy;
    }
  }

  drawStatus() {
    const test = this.test;
    const progress = $("#quiz-progress");
    const estimate = $("#quiz-estimate");
    const testing = test && test.status === "in_progress";
    progress.hidden = !testing;
    estimate.hidden = !test || test.answered === 0;
    $("#quiz-restart").hidden = !testing;
    if (testing) {
      const position = this.mode === "feedback" ? test.answered : test.item.position;
      progress.textContent = t("quiz.web.progress", { position, max: test.max_items });
    }
    if (test && test.answered > 0) {
      estimate.textContent = t("quiz.web.estimate", { theta: signed(test.theta), se: number(test.se) });
    }
  }

  fillProfile() {
    const p = this.profile;
    if (!p) {
      return;
    }
    $("#quiz-level").value = p.self_level;
    $("#quiz-years").value = String(p.years_experience);
    $("#quiz-role").value = p.job_role;
    $("#quiz-duty").value = p.duty;
    $("#quiz-interests").value = p.interests.join(t("quiz.web.list_separator"));
  }

  drawItem() {
    const item = this.test.item;
    const form = $("#quiz-item");
    if (form.dataset.question === item.question_id && form.dataset.lang === lang()) {
      return; // drawn already: keep what the person chose or typed
    }
    form.dataset.question = item.question_id;
    form.dataset.lang = lang();
    $("#quiz-item-meta").textContent = t("quiz.web.item.meta", {
      position: item.position,
      category: CATEGORY[item.category] ? t(CATEGORY[item.category]) : item.category,
      topic: item.topic || "—",
      level: item.difficulty,
    });
    $("#quiz-stem").textContent = item.stem;
    const answer = $("#quiz-answer");
    if (item.item_type === "short_answer") {
      answer.replaceChildren(
        h("label", { class: "sr-only", for: "quiz-text" }, t("quiz.web.item.your_answer")),
        h("textarea", { id: "quiz-text", rows: 3, maxLength: 2000, placeholder: t("quiz.web.item.text_hint") }),
      );
      return;
    }
    const options =
      item.item_type === "true_false"
        ? [
            ["true", t(TRUTH.true)],
            ["false", t(TRUTH.false)],
          ]
        : item.choices.map((choice) => [choice, choice]);
    answer.replaceChildren(
      ...options.map(([value, label], index) =>
        h(
          "label",
          { class: "quiz-choice" },
          h("input", { type: "radio", name: "quiz-choice", value, dataset: { index: String(index + 1) } }),
          h("span", {}, label),
        ),
      ),
    );
  }

  answerText(item, answer) {
    if (item && item.item_type === "true_false" && TRUTH[answer]) {
      return t(TRUTH[answer]);
    }
    return answer;
  }

  facts(feedback, item) {
    const rows = [[t("quiz.web.feedback.your_answer"), this.answerText(item, feedback.answer)]];
    if (feedback.correct_answer) {
      rows.push([t("quiz.web.feedback.right_answer"), this.answerText(item, feedback.correct_answer)]);
    } else if (feedback.correct_keywords) {
      rows.push([t("quiz.web.feedback.keywords"), feedback.correct_keywords.join(t("quiz.web.list_separator"))]);
    }
    rows.push([t("quiz.web.feedback.score"), t("quiz.web.feedback.points", { score: number(feedback.score, 0) })]);
    return rows.flatMap(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]);
  }

  verdict(feedback) {
    if (feedback.is_correct) {
      return ["right", t("quiz.web.feedback.right")];
    }
    if (feedback.score >= 70) {
      return ["partial", t("quiz.web.feedback.partial")];
    }
    return ["wrong", t("quiz.web.feedback.wrong")];
  }

  drawFeedback() {
    const feedback = this.feedback;
    const item = this.answered;
    const [tone, words] = this.verdict(feedback);
    const verdict = $("#quiz-verdict");
    verdict.classList.remove("right", "partial", "wrong");
    verdict.classList.add(tone);
    verdict.textContent = words;
    $("#quiz-feedback-stem").textContent = item.stem;
    $("#quiz-feedback-facts").replaceChildren(...this.facts(feedback, item));
    $("#quiz-explanation").textContent = feedback.explanation || "";
    const grader = $("#quiz-grader");
    const graderWords =
      feedback.graded_by === "fallback"
        ? t("quiz.web.feedback.fallback")
        : [feedback.grader_feedback, feedback.grader_explanation].filter(Boolean).join("\n\n");
    grader.hidden = !graderWords;
    grader.textContent = graderWords;
    $("#quiz-after").textContent = t("quiz.web.estimate", { theta: signed(feedback.theta), se: number(feedback.se) });
    $("#quiz-next").textContent = t(this.test.status === "in_progress" ? "quiz.web.next" : "quiz.web.see_results");
  }

  drawResult() {
    const test = this.test;
    $("#quiz-score").textContent = t("quiz.web.result.theta", { theta: signed(test.theta), se: number(test.se), n: test.answered });
    const right = (test.review || []).filter((r) => r.feedback.is_correct).length;
    const stop = STOP[test.stop_reason] ? t(STOP[test.stop_reason], { se: number(test.se_target) }) : t("quiz.web.stop.abandoned");
    const summary = t("quiz.web.result.summary", { right: t("quiz.web.result.right", { right, n: test.answered }), stop });
    $("#quiz-stop").textContent = test.level_derived_items
      ? t("quiz.web.result.with_note", { text: summary, note: t("quiz.web.result.level_derived", { derived: test.level_derived_items, calibrated: test.calibrated_items }) })
      : summary;
    const plot = $("#quiz-plot");
    const source = path(`/tests/${encodeURIComponent(test.id)}/plot.svg`);
    if (plot.getAttribute("src") !== source) {
      plot.setAttribute("src", source);
    }
    plot.alt = t("quiz.web.result.plot_alt", { theta: signed(test.theta), se: number(test.se) });
    $("#quiz-review").replaceChildren(
      ...(test.review || []).map(({ item, feedback }) => {
        const [tone, words] = this.verdict(feedback);
        return h(
          "li",
          { class: ["quiz-reviewed", tone], dataset: { position: String(item.position) } },
          h("p", { class: "quiz-review-stem" }, h("strong", { class: "quiz-review-verdict" }, words), item.stem),
          h("dl", { class: "quiz-facts" }, this.facts(feedback, item)),
          feedback.explanation ? h("p", { class: ["muted", "small"] }, feedback.explanation) : null,
        );
      }),
    );
  }
}
