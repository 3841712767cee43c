// An app's page: the conversation and the language switch, with the app's own panels (its module, named by the page,
// exports `mount(ctx)`; see `mountApp`). Nothing here is about one app.

import { api, follow } from "./api.js";
import { RunView } from "./chat.js";
import { h } from "./dom.js";
import { LANGUAGES, apply, has, lang, load, t } from "./i18n.js";

const $ = (selector) => document.querySelector(selector);
const APP = document.body.dataset.app;

const ERRORS = {
  no_session: "web.error.no_session",
  not_found: "web.error.not_found",
  conflict: "web.error.conflict",
  invalid_answer: "web.error.invalid_answer",
  invalid_request: "web.error.invalid_request",
  invalid_json: "web.error.invalid_request",
  network: "web.error.network",
};

const state = {
  views: [], // RunView of each run shown, oldest first
  current: null, // the RunView of the newest run
  shown: new Set(), // ids of the runs shown
  part: null, // what the app's module returned from mount()
  turn: null, // the id of the newest run the page started (or restored): the next request continues its conversation
  mainAgent: "", // the agent each request starts with; the others' runs are shown after the run that handed over
};


function toast(text, tone = "info") {
  const node = h("div", { class: ["toast", tone] }, text);
  $("#toasts").append(node);
  setTimeout(() => node.remove(), 6000);
}

function showError(error) {
  const key = ERRORS[error.code] || `${APP}.web.error.${error.code}`; // the app's own error codes in its catalog
  const detail = error.message && error.message !== String(error.status) ? error.message : "";
  toast(key && has(key) ? t(key, { detail }) : t("web.error.generic", { detail }), "error");
}

// ---- the app's panels ---------------------------------------------------------------------------------------------

// The app's module: `mount({ api, t, onError, onNotice })` returns hooks, each optional: `ready` (a promise: the
// panels have their data), `planApplied()` (a plan of the chat was applied), `redraw()` (the language changed),
// `event(event, { live })` (every event of the runs the page shows, the hand-over's included, as they arrive or
// replay; `live` is false for the replay of a run that had ended when the page showed it), `beforeSend(prompt)`
// (awaited before a message is sent, e.g. to hand the server what the panels show; a rejection stops the send).
async function mountApp() {
  const script = document.body.dataset.appScript;
  if (!script) {
    return {};
  }
  const module = await import(script);
  return module.mount({ api, t, onError: showError, onNotice: (text) => toast(text, "ok") }) || {};
}

// An app's examples of requests (its `<app>.web.example` and `.example2`, with their `_prompt`): a click fills them in.
const EXAMPLES = ["example", "example2"];

function brand() {
  const name = has(`${APP}.web.name`) ? t(`${APP}.web.name`) : APP;
  $("#app-name").textContent = name;
  $("#app-tagline").textContent = has(`${APP}.web.tagline`) ? t(`${APP}.web.tagline`) : "";
  document.title = t("web.title", { name }); // one pattern for every app
  for (const id of EXAMPLES) {
    const example = $(`#${id}`);
    example.hidden = !has(`${APP}.web.${id}`);
    example.textContent = example.hidden ? "" : t(`${APP}.web.${id}`);
  }
}

// ---- the conversation ---------------------------------------------------------------------------------------------

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
// A run that hands its turn over (`handed_over`: the host started the app's next agent) is followed by that run; the
// next request still continues the conversation of the run that began the turn (`handed` runs are not turns).
function show(run, { live, handed = false }) {
  const view = new RunView(run.id, {
    transcript: $("#transcript"),
    thinking: $("#thinking"),
    onError: showError,
    onPlanApplied: () => state.part?.planApplied?.(),
    onChange: updateComposer,
    handed,
  });
  state.views.push(view);
  state.shown.add(run.id);
  state.current = view;
  if (!handed) {
    state.turn = run.id;
  }
  updateComposer();
  let next = null;
  view.source = follow(run.id, {
    live,
    onEvent: (event) => {
      state.part?.event?.(event, { live });
      if (event.type === "handed_over") {
        next = event.next_run_id;
      }
      view.handle(event);
    },
    onReset: () => view.reset(),
    onLive: () => view.caughtUp(),
    onLost: () => toast(t("web.stream.lost"), "error"),
  });
  return view.source.done.then(async () => {
    view.finish();
    view.caughtUp();
    updateComposer();
    if (next && !state.shown.has(next) && state.current === view) {
      await show(await api("GET", `/api/runs/${encodeURIComponent(next)}`), { live: true, handed: true });
    }
  });
}

async function send(prompt) {
  const text = prompt.trim();
  if (!text || busy()) {
    return;
  }
  let run;
  try {
    await state.part?.beforeSend?.(text);
    run = await api("POST", "/api/runs", { prompt: text, lang: lang(), continue_from: state.turn });
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
  state.shown.clear();
  state.turn = null;
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
  const turns = runs.filter((run) => !run.agent || run.agent === state.mainAgent);
  const newestTurn = turns[0] || runs[0];
  const thread = runs.filter((run) => run.thread_id === newestTurn.thread_id).reverse();
  const newest = thread.pop();
  for (const run of thread) {
    if (!state.shown.has(run.id)) {
      await show(run, { live: false }); // one after the other, so the transcript reads in order
    }
  }
  if (!state.shown.has(newest.id)) {
    show(newest, { live: true }); // followed until it ends; not waited for
  }
}

// ---- language -----------------------------------------------------------------------------------------------------

// `?lang=` in the address wins (a link can open the page in a language), then the person's last choice, then the
// browser's language, then the server's default.
function askedLanguage() {
  const asked = (new URLSearchParams(window.location.search).get("lang") || "").trim().toLowerCase();
  if (!asked) {
    return null;
  }
  return asked.startsWith("zh") ? "zh-CN" : asked.startsWith("en") ? "en" : null;
}

function preferredLanguage(fallback) {
  const asked = askedLanguage();
  if (asked) {
    return asked;
  }
  const saved = localStorage.getItem("consulta.lang");
  if (LANGUAGES.includes(saved)) {
    return saved;
  }
  const browser = (navigator.language || "").toLowerCase().startsWith("zh") ? "zh-CN" : null;
  return browser || fallback;
}

async function switchLanguage(code) {
  localStorage.setItem("consulta.lang", code);
  const address = new URL(window.location.href);
  if (address.searchParams.has("lang")) {
    address.searchParams.set("lang", code); // the address says the choice too, so a reload keeps it
    window.history.replaceState(null, "", address);
  }
  await load(code);
  apply();
  $("#lang").value = lang();
  // Redraw what code drew: the app's panels at once, the conversation from its replay.
  brand();
  state.part?.redraw?.();
  newConversation();
  await restore();
}

// ---- theme ---------------------------------------------------------------------------------------------------------

// Light or dark: the system's preference until the person picks one with the toggle (remembered; theme.js applies it
// before the first paint).
function currentTheme() {
  const chosen = document.documentElement.dataset.theme;
  if (chosen === "dark" || chosen === "light") {
    return chosen;
  }
  return window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function showTheme() {
  $("#theme").setAttribute("aria-pressed", String(currentTheme() === "dark"));
}

function toggleTheme() {
  const next = currentTheme() === "dark" ? "light" : "dark";
  document.documentElement.dataset.theme = next;
  try {
    localStorage.setItem("consulta.theme", next);
  } catch (error) {
    // not remembered (storage refused), still applied
  }
  showTheme();
}

// ---- start --------------------------------------------------------------------------------------------------------

async function start() {
  const info = await api("GET", "/api/app");
  state.mainAgent = info.main_agent;
  await load(preferredLanguage(info.default_lang));
  apply();
  brand();
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
  for (const id of EXAMPLES) {
    $(`#${id}`).addEventListener("click", () => {
      $("#prompt").value = t(`${APP}.web.${id}_prompt`);
      $("#prompt").focus();
    });
  }
  $("#new-chat").addEventListener("click", newConversation);
  showTheme();
  $("#theme").addEventListener("click", toggleTheme);
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", showTheme);
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
  updateComposer();
  state.part = await mountApp();
  await Promise.all([state.part.ready, restore()]);
  document.body.dataset.ready = "true";
}

start().catch(showError);
