// The advisor site on the web page, next to the chat: home, the ranking (a school's major; sorted by the overall
// rating or one of the four dimensions) and an advisor's detail, routed by the URL's hash (#/, #/ranking?…,
// #/advisor/ID), every number read from /api/advisor/*. The page keeps the seed's page_context (what it shows) on the
// server, posted whenever it changes and again before each message (the page's `beforeSend` hook), where the agent
// reads it. When a turn ends, the reply's tool calls are applied (update_ranking: the ranking for its school and
// major; recommend_advisors: those advisors highlighted with their reasons; get_advisor_detail: the detail opened) and
// its voice_response is spoken: synthesised by the server, played here, unless muted (remembered). A microphone
// button appears only where the browser has speech recognition; typing always works. The chat shows each reply's
// voice_response, not its JSON.

import { api } from "/static/js/api.js";
import { h } from "/static/js/dom.js";
import { lang, t } from "/static/js/i18n.js";

const $ = (selector) => document.querySelector(selector);

const MUTE_KEY = "consulta.advisor.muted";
const SITE_TOOLS = new Set(["update_ranking", "recommend_advisors", "get_advisor_detail"]);
const LABELS = {
  overall: "advisor.web.dimension.overall",
  academic: "advisor.web.dimension.academic",
  funding: "advisor.web.dimension.funding",
  relationship: "advisor.web.dimension.relationship",
  future: "advisor.web.dimension.future",
};
let columns = {}; // a dimension's name in the data (the seed's 学术水平 …) -> its column (academic …), from the catalog

export function mount({ onError }) {
  const site = new Site({ root: $("#advisor-site"), view: $("#site-view"), crumb: $("#site-crumb"), mute: $("#advisor-mute"), audio: $("#advisor-voice"), onError });
  window.addEventListener("hashchange", () => {
    if (location.hash !== site.routed) {
      site.route(location.hash).catch(onError);
    }
  });
  site.mute.addEventListener("click", () => site.setMuted(!site.muted));
  addMicrophone();
  showSpokenWords($("#transcript"));
  return {
    ready: site.start(),
    redraw: () => site.draw(),
    event: (event, info) => site.heard(event, info),
    beforeSend: () => site.sendContext(),
  };
}

// ---- the route: #/ · #/ranking?school=…&major=…&sort=… · #/advisor/ID -------------------------------------------------

export function parseRoute(hash) {
  const [path, query = ""] = (hash || "").replace(/^#/, "").split("?");
  const params = new URLSearchParams(query);
  const detail = path.match(/^\/advisor\/([^/]+)$/);
  if (detail) {
    return { page: "detail", id: decodeURIComponent(detail[1]) };
  }
  if (path === "/ranking") {
    return { page: "ranking", school: params.get("school") || null, major: params.get("major") || null, sort_by: params.get("sort") || "overall" };
  }
  return { page: "home" };
}

function rankingHash({ school, major, sort_by: sort }) {
  const params = new URLSearchParams();
  if (school) params.set("school", school);
  if (major) params.set("major", major);
  if (sort && sort !== "overall") params.set("sort", sort);
  const query = params.toString();
  return `#/ranking${query ? `?${query}` : ""}`;
}

class Site {
  constructor({ root, view, crumb, mute, audio, onError }) {
    Object.assign(this, { root, view, crumb, mute, audio, onError });
    this.catalog = null;
    this.page = "home";
    this.filters = { school: null, major: null, sort_by: "overall" };
    this.ranking = null; // GET /api/advisor/ranking for the filters
    this.detail = null; // GET /api/advisor/advisors/ID
    this.recommended = new Map(); // id -> the recommendation (reason, matched)
    this.spokenWords = ""; // the last reply's words: the ranking's advisors they name are marked
    this.routed = null; // the hash drawn
    this.calls = new Map(); // run id -> the site's tool calls seen in its events
    this.sent = Promise.resolve();
    this.muted = localStorage.getItem(MUTE_KEY) === "true";
    this.drawMute();
  }

  async start() {
    this.catalog = await api("GET", "/api/advisor/catalog");
    columns = this.catalog.dimension_keys;
    let hash = location.hash;
    if (!hash || hash === "#") {
      hash = this.restoredHash(await api("GET", "/api/advisor/page"));
    }
    await this.route(hash);
  }

  // Where the session's page was (a reload, a restart): its ranking or its detail page.
  restoredHash(context) {
    if (!context) {
      return "#/";
    }
    const filters = context.ranking_filters || {};
    if (context.current_page === "detail" && context.selected_advisor) {
      this.filters = { school: filters.school || null, major: filters.major || null, sort_by: filters.sort_by || "overall" };
      this.recommended = new Map((context.recommended || []).map((id) => [id, null]));
      return `#/advisor/${encodeURIComponent(context.selected_advisor.id)}`;
    }
    if (context.current_page === "ranking") {
      this.recommended = new Map((context.recommended || []).map((id) => [id, null]));
      return rankingHash(filters);
    }
    return "#/";
  }

  async go(hash) {
    if (location.hash !== hash) {
      history.pushState(null, "", hash);
    }
    await this.route(hash);
  }

  async route(hash) {
    this.routed = hash;
    const route = parseRoute(hash);
    try {
      if (route.page === "ranking") {
        const changed = route.school !== this.filters.school || route.major !== this.filters.major;
        this.filters = { school: route.school, major: route.major, sort_by: route.sort_by };
        if (changed) {
          this.recommended.clear();
        }
        await this.loadRanking();
      } else if (route.page === "detail") {
        this.detail = await api("GET", `/api/advisor/advisors/${encodeURIComponent(route.id)}`);
        if (!this.filters.school || !this.filters.major) {
          // Opened from a link: the ranking behind it is the advisor's school and major.
          this.filters = { school: this.detail.school, major: this.detail.major, sort_by: "overall" };
        }
        if (!this.ranking || this.ranking.school !== this.filters.school || this.ranking.major !== this.filters.major) {
          await this.loadRanking();
        }
      }
      this.page = route.page;
    } catch (error) {
      this.onError(error);
      if (route.page === "detail") {
        this.detail = null;
      }
      this.page = route.page === "detail" ? "ranking" : route.page;
    }
    this.draw();
    this.sendContext();
  }

  async loadRanking() {
    const { school, major, sort_by: sort } = this.filters;
    if (!school || !major) {
      this.ranking = null;
      return;
    }
    const query = new URLSearchParams({ school, major, sort_by: sort || "overall" });
    this.ranking = await api("GET", `/api/advisor/ranking?${query}`);
  }

  // ---- the page context (seed §3.1) --------------------------------------------------------------------------------

  context() {
    const visible = (this.ranking?.advisors || []).map((a) => ({ id: a.id, name: a.name, title: a.title, rating: a.rating, rank: a.rank }));
    const selected = this.page === "detail" && this.detail ? { id: this.detail.id, name: this.detail.name, title: this.detail.title } : null;
    return {
      current_page: this.page,
      visible_advisors: visible,
      selected_advisor: selected,
      ranking_filters: { ...this.filters },
      recommended: [...this.recommended.keys()],
    };
  }

  // Post the context (in order: each post waits for the one before); resolves when the server has it.
  sendContext() {
    const context = this.context();
    this.root.dataset.page = context.current_page;
    this.sent = this.sent
      .catch(() => {})
      .then(() => api("POST", "/api/advisor/page", context))
      .catch((error) => this.onError(error));
    return this.sent;
  }

  // ---- what the agent's turn did -----------------------------------------------------------------------------------

  heard(event, info = {}) {
    if (info.live === false) {
      return; // a replay of an earlier turn: the page is already past it
    }
    if (event.type === "tool_called" && SITE_TOOLS.has(event.tool_name)) {
      const calls = this.calls.get(event.run_id) || [];
      calls.push({ tool: event.tool_name, params: event.args || {} });
      this.calls.set(event.run_id, calls);
    } else if (event.type === "run_ended") {
      const seen = this.calls.get(event.run_id) || [];
      this.calls.delete(event.run_id);
      if (event.status === "finished") {
        const reply = readReply(event.output, seen);
        this.applyReply(reply).catch(this.onError);
      }
    }
  }

  async applyReply({ voice_response: voice, tool_calls: calls }) {
    this.spokenWords = voice || "";
    for (const call of calls) {
      await this.apply(call);
    }
    this.draw(); // the advisors the reply names are marked in the ranking
    this.view.querySelector(".advisor-card.named")?.scrollIntoView({ block: "nearest" });
    if (voice) {
      this.speak(voice);
    }
  }

  async apply({ tool, params = {} }) {
    if (tool === "update_ranking" && params.school && params.major) {
      this.recommended.clear();
      await this.go(rankingHash({ school: params.school, major: params.major, sort_by: params.sort_by || this.filters.sort_by }));
    } else if (tool === "recommend_advisors" && params.school && params.major) {
      if (this.page !== "ranking" || this.filters.school !== params.school || this.filters.major !== params.major) {
        await this.go(rankingHash({ school: params.school, major: params.major, sort_by: this.filters.sort_by }));
      }
      const found = await api("POST", "/api/advisor/recommendations", { school: params.school, major: params.major, preferences: flatPreferences(params) });
      this.recommended = new Map(found.advisors.map((a) => [a.id, a]));
      this.draw();
      this.sendContext();
      this.view.querySelector(".advisor-card.recommended")?.scrollIntoView({ block: "nearest" });
    } else if (tool === "get_advisor_detail" && params.advisor_id) {
      await this.go(`#/advisor/${encodeURIComponent(params.advisor_id)}`);
    }
  }

  // ---- voice ---------------------------------------------------------------------------------------------------------

  setMuted(muted) {
    this.muted = muted;
    localStorage.setItem(MUTE_KEY, String(muted));
    if (muted) {
      this.audio.pause();
    }
    this.drawMute();
  }

  drawMute() {
    this.mute.setAttribute("aria-pressed", String(this.muted));
    this.mute.textContent = this.muted ? t("advisor.web.voice.muted") : t("advisor.web.voice.on");
    this.mute.title = this.muted ? t("advisor.web.voice.unmute") : t("advisor.web.voice.mute");
  }

  speak(text) {
    this.root.dataset.spoken = text;
    if (this.muted) {
      return;
    }
    const query = new URLSearchParams({ text: text.slice(0, 200), lang: spokenLanguage(text) });
    this.audio.src = `/api/advisor/speech?${query}`;
    this.audio.play().catch(() => {}); // a browser that refuses to play still shows the reply
  }

  // ---- drawing -------------------------------------------------------------------------------------------------------

  draw() {
    this.drawMute();
    for (const link of this.root.querySelectorAll("[data-nav]")) {
      link.classList.toggle("current", link.dataset.nav === this.page);
    }
    this.crumb.hidden = this.page !== "detail" || !this.detail;
    this.crumb.textContent = this.detail ? this.personName(this.detail) : "";
    const rankingLink = this.root.querySelector("[data-nav=ranking]");
    rankingLink.href = rankingHash(this.filters);
    if (!this.catalog) {
      return;
    }
    const view = this.page === "ranking" ? this.rankingView() : this.page === "detail" && this.detail ? this.detailView() : this.homeView();
    this.view.replaceChildren(view);
  }

  schoolName(name) {
    const school = this.catalog.schools.find((s) => s.name === name);
    return lang() === "zh-CN" || !school ? name : school.en;
  }

  majorName(name) {
    const major = this.catalog.majors.find((m) => m.name === name);
    return lang() === "zh-CN" || !major ? name : major.en;
  }

  personName(advisor) {
    return lang() === "zh-CN" ? advisor.name : t("advisor.web.person_en", { name_en: advisor.name_en, name: advisor.name });
  }

  homeView() {
    const { schools, majors, advisors, reviews } = this.catalog;
    // The major every school lists (the data's), in the first schools: the popular rankings.
    const common = majors.map((m) => m.name).find((major) => schools.every((s) => s.majors.includes(major))) || schools[0].majors[0];
    const example = (school) =>
      h("button", { type: "button", class: "chip", on: { click: () => this.go(rankingHash({ school, major: common, sort_by: "overall" })) } }, t("advisor.web.school_major", { school: this.schoolName(school), major: this.majorName(common) }));
    return h(
      "div",
      { class: "site-home" },
      h("div", { class: "hero" }, h("h3", {}, t("advisor.web.home.title")), h("p", {}, t("advisor.web.home.lead"))),
      h(
        "ul",
        { class: "stats" },
        stat(schools.length, t("advisor.web.home.schools")),
        stat(majors.length, t("advisor.web.home.majors")),
        stat(advisors, t("advisor.web.home.advisors")),
        stat(reviews, t("advisor.web.home.reviews")),
      ),
      h("h4", {}, t("advisor.web.home.try")),
      h("div", { class: "chips" }, ...schools.slice(0, 3).map((school) => example(school.name))),
      h("h4", {}, t("advisor.web.home.say")),
      h(
        "ul",
        { class: "say" },
        ...["advisor.web.home.say1", "advisor.web.home.say2", "advisor.web.home.say3", "advisor.web.home.say4"].map((key) =>
          h("li", {}, h("button", { type: "button", class: "link", on: { click: () => fillPrompt(t(key).slice(1, -1)) } }, t(key))),
        ),
      ),
      h("h4", {}, t("advisor.web.home.all_schools")),
      h(
        "div",
        { class: ["chips", "schools"] },
        ...schools.map((school) =>
          h("button", { type: "button", class: "chip", on: { click: () => this.go(rankingHash({ school: school.name, major: school.majors.includes(common) ? common : school.majors[0], sort_by: "overall" })) } }, this.schoolName(school.name)),
        ),
      ),
    );
  }

  filterBar() {
    const { school, major, sort_by: sort } = this.filters;
    const entry = this.catalog.schools.find((s) => s.name === school);
    const majors = entry ? entry.majors : this.catalog.majors.map((m) => m.name);
    const select = (id, label, value, options, onChange) =>
      h(
        "label",
        { class: "filter" },
        h("span", {}, label),
        h(
          "select",
          { id, on: { change: (event) => onChange(event.target.value) } },
          ...options.map(([code, text]) => h("option", { value: code, selected: code === (value || "") }, text)),
        ),
      );
    return h(
      "div",
      { class: "filters" },
      select("filter-school", t("advisor.web.filter.school"), school, [["", t("advisor.web.filter.pick_school")], ...this.catalog.schools.map((s) => [s.name, this.schoolName(s.name)])], (value) => {
        const offered = this.catalog.schools.find((s) => s.name === value)?.majors || [];
        this.go(rankingHash({ school: value, major: offered.includes(major) ? major : null, sort_by: sort }));
      }),
      select("filter-major", t("advisor.web.filter.major"), major, [["", t("advisor.web.filter.pick_major")], ...majors.map((m) => [m, this.majorName(m)])], (value) =>
        this.go(rankingHash({ school, major: value, sort_by: sort })),
      ),
      select("filter-sort", t("advisor.web.filter.sort"), sort, ["overall", ...this.catalog.dimensions].map((key) => [key, dimensionName(key)]), (value) => this.go(rankingHash({ school, major, sort_by: value }))),
    );
  }

  rankingView() {
    const children = [this.filterBar()];
    if (!this.ranking) {
      children.push(h("p", { class: "empty-note" }, t("advisor.web.ranking.choose")));
    } else if (!this.ranking.advisors.length) {
      children.push(h("p", { class: "empty-note" }, t("advisor.web.ranking.none", { school: this.schoolName(this.ranking.school), major: this.majorName(this.ranking.major) })));
    } else {
      children.push(
        h("p", { class: "ranking-title" }, t("advisor.web.ranking.title", { school: this.schoolName(this.ranking.school), major: this.majorName(this.ranking.major), count: this.ranking.total, sort: dimensionName(this.ranking.sort_by) })),
        h("ol", { class: "advisor-list", id: "advisor-list" }, ...this.ranking.advisors.map((a) => this.card(a))),
      );
    }
    return h("div", { class: "site-ranking" }, ...children);
  }

  card(advisor) {
    const recommendation = this.recommended.get(advisor.id);
    const recommended = this.recommended.has(advisor.id);
    const named = namedIn(this.spokenWords, advisor);
    const english = lang() !== "zh-CN";
    const open = () => this.go(`#/advisor/${encodeURIComponent(advisor.id)}`);
    return h(
      "li",
      { class: ["advisor-card", recommended && "recommended", named && "named"], dataset: { id: advisor.id, rank: String(advisor.rank) }, "aria-current": named ? "true" : null },
      h("div", { class: "rank-badge", "aria-label": t("advisor.web.card.rank", { rank: advisor.rank }) }, String(advisor.rank)),
      h(
        "div",
        { class: "card-main" },
        h(
          "div",
          { class: "card-head" },
          h("button", { type: "button", class: ["link", "advisor-name"], on: { click: open } }, this.personName(advisor)),
          h("span", { class: "advisor-title" }, english ? advisor.title_en : advisor.title),
          recommended ? h("span", { class: ["badge", "ok", "recommended-badge"] }, t("advisor.web.card.recommended")) : null,
        ),
        h("p", { class: "directions" }, (english ? advisor.research_directions_en : advisor.research_directions).join(t("advisor.web.list_separator"))),
        recommendation ? h("p", { class: "reason" }, english ? recommendation.reason_en : recommendation.reason) : null,
        h("div", { class: "dimensions" }, ...Object.entries(advisor.ratings).map(([name, value]) => bar(name, value))),
        h("div", { class: "tags" }, ...(english ? advisor.tags_en : advisor.tags).map((tag) => h("span", { class: "tag" }, tag))),
      ),
      h(
        "div",
        { class: "card-score" },
        h("span", { class: "score", "aria-label": t("advisor.web.card.rating", { rating: advisor.rating.toFixed(1) }) }, advisor.rating.toFixed(1)),
        h("span", { class: "stars", "aria-hidden": "true" }, stars(advisor.rating)),
        h("span", { class: ["muted", "small"] }, t("advisor.web.card.reviews", { count: advisor.review_count })),
        h("button", { type: "button", class: ["ghost", "small"], on: { click: open } }, t("advisor.web.card.open")),
      ),
    );
  }

  detailView() {
    const a = this.detail;
    const english = lang() !== "zh-CN";
    const trait = (label, value) => h("div", { class: "trait" }, h("dt", {}, label), h("dd", {}, value));
    return h(
      "article",
      { class: "site-detail", dataset: { id: a.id } },
      h("button", { type: "button", class: ["link", "back"], on: { click: () => this.go(rankingHash(this.filters)) } }, t("advisor.web.detail.back")),
      h(
        "header",
        { class: "detail-head" },
        h(
          "div",
          {},
          h("h3", { class: "detail-name" }, h("span", {}, this.personName(a)), h("span", { class: "advisor-title" }, english ? a.title_en : a.title)),
          h("p", { class: "muted" }, t("advisor.web.school_major", { school: this.schoolName(a.school), major: a.majors.map((m) => this.majorName(m)).join(t("advisor.web.list_separator")) })),
        ),
        h(
          "div",
          { class: "card-score" },
          h("span", { class: "score" }, a.rating.toFixed(1)),
          h("span", { class: "stars", "aria-hidden": "true" }, stars(a.rating)),
          h("span", { class: ["muted", "small"] }, t("advisor.web.card.reviews", { count: a.review_count })),
        ),
      ),
      h("p", { class: "bio" }, english ? a.bio_en : a.bio),
      h(
        "dl",
        { class: "traits" },
        trait(t("advisor.web.detail.directions"), (english ? a.research_directions_en : a.research_directions).join(t("advisor.web.list_separator"))),
        trait(t("advisor.web.detail.personality"), english ? a.personality_en : a.personality),
        trait(t("advisor.web.detail.style"), english ? a.research_style_en : a.research_style),
        trait(t("advisor.web.detail.funding"), english ? a.funding_en : a.funding),
        trait(t("advisor.web.detail.papers"), String(a.papers)),
      ),
      h("div", { class: ["dimensions", "wide"] }, ...Object.entries(a.ratings).map(([name, value]) => bar(name, value))),
      h("div", { class: "tags" }, ...(english ? a.tags_en : a.tags).map((tag) => h("span", { class: "tag" }, tag))),
      h("h4", {}, t("advisor.web.detail.reviews", { count: a.review_count })),
      h(
        "ol",
        { class: "reviews", id: "advisor-reviews" },
        ...a.reviews.map((r) =>
          h(
            "li",
            { class: "review" },
            h("div", { class: "review-head" }, h("span", {}, english ? r.author_en : r.author), h("span", { class: "muted" }, r.date), h("span", { class: ["score", "small-score"] }, r.overall.toFixed(1))),
            h("p", {}, english ? r.text_en : r.text),
            h("p", { class: ["review-scores", "muted", "small"] }, ...Object.entries(r.ratings).map(([name, value]) => h("span", {}, t("advisor.web.review.score", { dimension: dimensionName(name), score: value })))),
          ),
        ),
      ),
    );
  }
}

// ---- the reply's shape -------------------------------------------------------------------------------------------------

// The seed's output {voice_response, tool_calls} from a run's output: the output itself when it is that JSON, else its
// text spoken and the site's tool calls the run made (as its events showed them).
export function readReply(output, seen = []) {
  if (typeof output === "string") {
    const text = output.trim();
    if (text.startsWith("{")) {
      try {
        const reply = JSON.parse(text);
        if (reply && typeof reply.voice_response === "string") {
          const calls = Array.isArray(reply.tool_calls) ? reply.tool_calls.filter((c) => c && SITE_TOOLS.has(c.tool)) : [];
          return { voice_response: reply.voice_response, tool_calls: calls.length || !seen.length ? calls : seen };
        }
      } catch {
        // not JSON: the text is the reply
      }
    }
    return { voice_response: text, tool_calls: seen };
  }
  return { voice_response: "", tool_calls: seen };
}

// recommend_advisors' preferences, flat (the seed nests research_direction beside the personal preferences).
function flatPreferences(params) {
  const preferences = { ...(params.preferences || {}) };
  for (const key of ["research_direction", "personality", "research_style", "funding"]) {
    if (params[key] && !preferences[key]) {
      preferences[key] = params[key];
    }
  }
  return Object.fromEntries(Object.entries(preferences).filter(([key, value]) => ["research_direction", "personality", "research_style", "funding"].includes(key) && typeof value === "string" && value));
}

// ---- small pieces ------------------------------------------------------------------------------------------------------

// The voice for a reply: Mandarin when it is mostly Chinese (whatever the page's language), else English.
// Whether a reply's words name an advisor (their Chinese name, or their English name).
export function namedIn(words, advisor) {
  return Boolean(words) && (words.includes(advisor.name) || (Boolean(advisor.name_en) && words.toLowerCase().includes(advisor.name_en.toLowerCase())));
}

export function spokenLanguage(text) {
  const han = (text.match(/[\u4e00-\u9fff]/g) || []).length;
  const words = (text.match(/[A-Za-z]+/g) || []).length;
  return han && han >= words ? "zh-CN" : "en";
}

function dimensionName(key) {
  return t(LABELS[key === "overall" ? key : columns[key]] || key);
}

function bar(name, value) {
  const fill = h("span");
  fill.style.width = `${Math.round((value / 5) * 100)}%`;
  return h(
    "div",
    { class: "dimension", dataset: { dimension: columns[name] || name } },
    h("span", { class: "dimension-name" }, dimensionName(name)),
    h("span", { class: "dimension-bar", "aria-hidden": "true" }, fill),
    h("span", { class: "dimension-value" }, Number(value).toFixed(1)),
  );
}

function stars(rating) {
  const full = Math.round(rating);
  return "★".repeat(full) + "☆".repeat(5 - full);
}

function stat(value, label) {
  return h("li", {}, h("strong", {}, String(value)), h("span", {}, label));
}

// The chat shows a reply as its words: a run's output is the seed's {voice_response, tool_calls} JSON, and what the
// person reads is its voice_response (the tool calls are what the site did; the JSON stays in the bubble's title).
function showSpokenWords(transcript) {
  if (!transcript) {
    return;
  }
  const spoken = (bubble) => {
    const text = bubble.textContent.trim();
    if (!text.startsWith("{")) {
      return;
    }
    const reply = readReply(text);
    if (reply.voice_response && reply.voice_response !== text) {
      bubble.title = text;
      bubble.textContent = reply.voice_response;
    }
  };
  new MutationObserver((changes) => {
    for (const change of changes) {
      for (const node of change.addedNodes) {
        if (node.nodeType === Node.ELEMENT_NODE && node.matches("li.msg.agent")) {
          node.querySelectorAll(".bubble").forEach(spoken);
        }
      }
    }
  }).observe(transcript, { childList: true });
}

// An example put in the message box (the catalog's examples are quoted: the quotes stay out).
function fillPrompt(text) {
  const prompt = $("#prompt");
  if (prompt && !prompt.disabled) {
    prompt.value = text;
    prompt.focus();
  }
}

// Voice input where the browser has speech recognition: the words heard go in the message box and are sent.
function addMicrophone() {
  const Recognition = window.SpeechRecognition || window.webkitSpeechRecognition;
  const composer = $("#composer");
  if (!Recognition || !composer) {
    return;
  }
  const button = h("button", { type: "button", id: "advisor-mic", class: ["ghost", "mic"], title: t("advisor.web.voice.speak"), "aria-label": t("advisor.web.voice.speak") }, t("advisor.web.voice.mic"));
  button.addEventListener("click", () => {
    const recognition = new Recognition();
    recognition.lang = lang() === "zh-CN" ? "zh-CN" : "en-US";
    recognition.interimResults = false;
    recognition.maxAlternatives = 1;
    button.classList.add("listening");
    recognition.onresult = (event) => {
      const heard = event.results[0]?.[0]?.transcript || "";
      if (heard) {
        $("#prompt").value = heard;
        composer.requestSubmit();
      }
    };
    recognition.onend = () => button.classList.remove("listening");
    recognition.onerror = () => button.classList.remove("listening");
    recognition.start();
  });
  composer.insertBefore(button, $("#send"));
}
