// Every word on the page comes from the server's catalogs (GET /api/i18n/{lang}): t(key, values) in code, and
// data-i18n / data-i18n-placeholder / data-i18n-title / data-i18n-aria-label attributes in the HTML.

let messages = {};
let current = "en";

export const LANGUAGES = ["en", "zh-CN"];

export function lang() {
  return current;
}

export async function load(code) {
  const response = await fetch(`/api/i18n/${encodeURIComponent(code)}`);
  if (!response.ok) {
    throw new Error(String(response.status));
  }
  const body = await response.json();
  messages = body.messages;
  current = body.lang;
  document.documentElement.lang = current;
}

export function has(key) {
  return Object.prototype.hasOwnProperty.call(messages, key);
}

// The app the page serves: its catalog may word any generic message its own way (`<app>.<key>`, e.g.
// `<app>.web.chat.hint`), which wins over the app-neutral `key`.
const APP = document.body.dataset.app || "";

// The message `key` (the app's own wording first) with {name} placeholders filled from `values`; a missing key
// shows as itself, so it is noticed.
export function t(key, values = {}) {
  const own = `${APP}.${key}`;
  const text = APP && has(own) ? messages[own] : has(key) ? messages[key] : key;
  return text.replace(new RegExp("\\{(\\w+)\\}", "g"), (whole, name) => (name in values ? String(values[name]) : whole));
}

const ATTRIBUTES = [
  ["data-i18n-placeholder", "placeholder"],
  ["data-i18n-title", "title"],
  ["data-i18n-aria-label", "aria-label"],
];

export function apply(root = document) {
  for (const node of root.querySelectorAll("[data-i18n]")) {
    node.textContent = t(node.dataset.i18n);
  }
  for (const [data, attribute] of ATTRIBUTES) {
    for (const node of root.querySelectorAll(`[${data}]`)) {
      node.setAttribute(attribute, t(node.getAttribute(data)));
    }
  }
}

// Dates and times in the reader's language (the browser's own formats, no words of ours).
export function formatTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) {
    return iso;
  }
  return new Intl.DateTimeFormat(current, { dateStyle: "medium", timeStyle: "short" }).format(date);
}
