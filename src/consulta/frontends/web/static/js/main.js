// The ln2 page: wires the conversation, the inventory and the language switch together.

import { api, follow } from "./api.js";
import { RunView } from "./chat.js";
import { h } from "./dom.js";
import { LANGUAGES, apply, has, lang, load, t } from "./i18n.js";
import { Inventory } from "./ln2.js";

const $ = (selector) => document.querySelector(selector);

const ERRORS = {
  no_session: "web.error.no_session",
  not_found: "web.error.not_found",
  conflict: "web.error.conflict",
  invalid_answer: "web.error.invalid_answer",
  invalid_request: "web.error.invalid_request",
  invalid_json: "web.error.invalid_request",
  unknown_audit_entry: "web.error.unknown_audit_entry",
  network: "web.error.network",
};

const state = {
  views: [], // RunView of each run shown, oldest first
  current: null, // the RunView of the newest run
};

function toast(text, tone = "info") {
  const node = h("div", { class: ["toast", tone] }, text);
  $("#toasts").append(node);
  setTimeout(() => node.remove(), 6000);
}

function showError(error) {
  const key = ERRORS[error.code];
  const detail = error.message && error.message !== String(error.status) ? error.message : "";
  toast(key && has(key) ? t(key, { detail }) : t("web.error.generic", { detail }), "error");
}

// ---- the conversation ---------------------------------------------------------------------------------------------

const inventory = new Inventory({
  tabs: $("#box-tabs"),
  grid: $("#grid"),
  tube: $("#tube"),
  audit: $("#audit-list"),
  confirm: $("#confirm"),
  onError: showError,
  onNotice: (text) => toast(text, "ok"),
});

function busy() {
  return Boolean(state.current && !state.current.ended);
}

function updateComposer() {
  const running = busy();
  $("#send").disabled = running;
  $("#prompt").disabled = running;
  $("#stop").hidden = !running;
  $("#empty-chat").hidden = state.views.length > 0;
  $("#transcript").setAttribute("aria-busy", String(running));
}

// Draw a run and follow its events; resolves when its stream ends (at once for an ended run's replay).
function show(run, { live }) {
  const view = new RunView(run.id, {
    transcript: $("#transcript"),
    thinking: $("#thinking"),
    onError: showError,
    onPlanApplied: () => {
      inventory.refresh().catch(showError);
      inventory.refreshAudit().catch(showError);
    },
    onChange: updateComposer,
  });
  state.views.push(view);
  state.current = view;
  updateComposer();
  view.source = follow(run.id, {
    live,
    onEvent: (event) => view.handle(event),
    onReset: () => view.reset(),
    onLive: () => view.caughtUp(),
    onLost: () => toast(t("web.stream.lost"), "error"),
  });
  return view.source.done.then(() => {
    view.caughtUp();
    updateComposer();
  });
}

async function send(prompt) {
  const text = prompt.trim();
  if (!text || busy()) {
    return;
  }
  const previous = state.current;
  let run;
  try {
    run = await api("POST", "/api/runs", { prompt: text, lang: lang(), continue_from: previous ? previous.runId : null });
  } catch (error) {
    showError(error);
    return;
  }
  $("#prompt").value = "";
  show(run, { live: true });
}

function newConversation() {
  for (const view of state.views) {
    view.source?.close();
    view.reset();
  }
  state.views = [];
  state.current = null;
  $("#transcript").replaceChildren();
  updateComposer();
  $("#prompt").focus();
}

// The newest conversation of this session, run by run (a reload or a language switch lands here).
async function restore() {
  const runs = await api("GET", "/api/runs?limit=50");
  if (!runs.length) {
    return;
  }
  const thread = runs.filter((run) => run.thread_id === runs[0].thread_id).reverse();
  const newest = thread.pop();
  for (const run of thread) {
    await show(run, { live: false }); // one after the other, so the transcript reads in order
  }
  show(newest, { live: true }); // followed until it ends; not waited for
}

// ---- language -----------------------------------------------------------------------------------------------------

function preferredLanguage(fallback) {
  const saved = localStorage.getItem("consulta.lang");
  if (LANGUAGES.includes(saved)) {
    return saved;
  }
  const browser = (navigator.language || "").toLowerCase().startsWith("zh") ? "zh-CN" : null;
  return browser || fallback;
}

async function switchLanguage(code) {
  localStorage.setItem("consulta.lang", code);
  await load(code);
  apply();
  $("#lang").value = lang();
  // Redraw what code drew: the inventory at once, the conversation from its replay.
  inventory.draw();
  inventory.drawTube();
  inventory.drawAudit();
  newConversation();
  await restore();
}

// ---- start --------------------------------------------------------------------------------------------------------

async function start() {
  const info = await api("GET", "/api/app");
  await load(preferredLanguage(info.default_lang));
  apply();
  $("#lang").value = lang();
  $("#lang").addEventListener("change", (event) => switchLanguage(event.target.value).catch(showError));
  $("#composer").addEventListener("submit", (event) => {
    event.preventDefault();
    send($("#prompt").value);
  });
  $("#prompt").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send($("#prompt").value);
    }
  });
  $("#example").addEventListener("click", () => {
    $("#prompt").value = t("web.chat.example_prompt");
    $("#prompt").focus();
  });
  $("#new-chat").addEventListener("click", newConversation);
  $("#stop").addEventListener("click", async () => {
    if (!state.current) {
      return;
    }
    try {
      await api("POST", `/api/runs/${encodeURIComponent(state.current.runId)}/stop`);
    } catch (error) {
      showError(error);
    }
  });
  $("#audit-refresh").addEventListener("click", () => inventory.refreshAudit().catch(showError));
  window.addEventListener("focus", () => inventory.refresh().catch(() => {}));
  updateComposer();
  await Promise.all([inventory.refresh(), inventory.refreshAudit(), restore()]);
  document.body.dataset.ready = "true";
}

start().catch(showError);
