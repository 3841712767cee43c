"""No word on the page is hard-coded: the HTML carries only data-i18n keys, and the JavaScript puts on screen only
what `t()` returns or what the data says. Every key the page uses is in both catalogs."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from consulta.apps import app_names, get_app
from consulta.i18n import catalog

STATIC = Path(__file__).resolve().parents[3] / "src" / "consulta" / "frontends" / "web" / "static"
APP_STATIC = {name: part.static for name in app_names() if (web := get_app(name).web) is not None and (part := web())}
"""Each app's own page assets, scanned like the page's."""
APP_PAGE_KEYS = ("name", "title", "tagline", "example", "example_prompt", "example2", "example2_prompt")
"""Keys the page reads for any app (`<app>.web.<key>`, each optional)."""
SHOWN_ATTRIBUTES = ("placeholder", "title", "aria-label", "alt")
# Literals that are words but never shown: key names compared with KeyboardEvent.key, HTTP header names, the media
# query the theme follows.
TECHNICAL_WORDS = {"Enter", "Escape", "Home", "End", "BUTTON", "(prefers-color-scheme: dark)"}
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
_KEY_USE = re.compile(r"""\bt\(\s*["']([^"']+)["']""")
_KEY_LITERAL = re.compile(r"""["']((?:web|ai|[a-z0-9]+\.web)\.[A-Za-z0-9_.]+)["']""")


# ---- the scanners ---------------------------------------------------------------------------------------------------


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.keys: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("meta", "link", "img", "input", "br", "hr"):
            self.stack.append(tag)
        for name, value in attrs:
            if name.startswith("data-i18n") and value:
                self.keys.add(value)
            elif name in SHOWN_ATTRIBUTES and value and re.search(r"\w", value):
                self.problems.append(f"<{tag} {name}={value!r}>: use data-i18n-{name}")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop() == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] in ("script", "style"):
            return
        if re.search(r"\w", data):
            self.problems.append(f"text {data.strip()!r} in <{self.stack[-1] if self.stack else '?'}>: use data-i18n")


def scan_html(source: str) -> tuple[list[str], set[str]]:
    parser = _Html()
    parser.feed(source)
    return parser.problems, parser.keys


def js_strings(source: str) -> list[str]:
    """Every string literal of a JavaScript source, template literals as their fixed parts (no regex literals: the
    page's code has none)."""
    out: list[str] = []
    braces: list[int] = []  # open `{` inside each `${ … }` being read
    i, n = 0, len(source)

    def template(j: int) -> int:
        chunk: list[str] = []
        while j < n:
            if source[j] == "\\":
                chunk.append(source[j : j + 2])
                j += 2
            elif source[j] == "`":
                out.append("".join(chunk))
                return j + 1
            elif source.startswith("${", j):
                out.append("".join(chunk))
                braces.append(0)
                return j + 2
            else:
                chunk.append(source[j])
                j += 1
        raise ValueError("unterminated template literal")

    while i < n:
        c = source[i]
        if source.startswith("//", i):
            end = source.find("\n", i)
            i = n if end < 0 else end
        elif source.startswith("/*", i):
            i = source.index("*/", i) + 2
        elif c in "'\"":
            j, chunk = i + 1, []
            while source[j] != c:
                if source[j] == "\\":
                    chunk.append(source[j : j + 2])
                    j += 2
                else:
                    chunk.append(source[j])
                    j += 1
            out.append("".join(chunk))
            i = j + 1
        elif c == "`":
            i = template(i + 1)
        elif c == "{" and braces:
            braces[-1] += 1
            i += 1
        elif c == "}" and braces:
            if braces[-1] == 0:
                braces.pop()
                i = template(i + 1)
            else:
                braces[-1] -= 1
                i += 1
        else:
            i += 1
    return out


def human_text(literal: str) -> bool:
    """Whether a literal reads as words for people (rather than a class, key, path, selector or symbol)."""
    if literal in TECHNICAL_WORDS:
        return False
    return bool(re.search(r"\s", literal) or _CJK.search(literal) or re.fullmatch(r"[A-Z][a-z]+", literal))


def scan_js(source: str) -> tuple[list[str], set[str]]:
    problems = [
        f"hard-coded text {s!r}: put it in the catalog and use t()" for s in js_strings(source) if human_text(s)
    ]
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "alert(", "confirm(", "prompt("):
        if sink in source:
            problems.append(f"{sink} puts text on screen outside t(): build nodes with h()")
    keys = set(_KEY_USE.findall(source)) | set(_KEY_LITERAL.findall(source))
    return problems, keys


# ---- the page ---------------------------------------------------------------------------------------------------------


def _assets() -> list[Path]:
    files = [
        f
        for folder in (STATIC, *APP_STATIC.values())
        for f in sorted(folder.rglob("*.html")) + sorted(folder.rglob("*.js"))
    ]
    assert len(files) >= 5, "the page's assets were not found: the scan is broken"
    return files


@pytest.mark.parametrize("path", _assets(), ids=lambda p: p.name)
def test_no_hard_coded_strings(path: Path) -> None:
    scan = scan_html if path.suffix == ".html" else scan_js
    problems, _ = scan(path.read_text(encoding="utf-8"))
    assert problems == []


def test_every_key_the_page_uses_is_in_both_catalogs() -> None:
    used: set[str] = set()
    for path in _assets():
        _, keys = (scan_html if path.suffix == ".html" else scan_js)(path.read_text(encoding="utf-8"))
        used |= keys
    assert len(used) > 50, "too few keys found: the scan is broken"
    en, zh = catalog("en"), catalog("zh-CN")
    assert sorted(k for k in used if k not in en or k not in zh) == []
    # and nothing in the web catalogs is dead weight
    used |= {f"{app}.web.{key}" for app in APP_STATIC for key in APP_PAGE_KEYS}
    used |= {
        f"{app}.{key}" for app in APP_STATIC for key in list(used) if key.startswith("web.")
    }  # an app's own wording of a page word
    web = ("web.", *(f"{app}.web." for app in APP_STATIC))
    app_errors = tuple(f"{app}.web.error." for app in APP_STATIC)  # shown by the page for the app's error codes
    assert sorted(k for k in en if k.startswith(web) and not k.startswith(app_errors) and k not in used) == []


def test_the_web_catalogs_are_really_translated() -> None:
    en, zh = catalog("en"), catalog("zh-CN")
    words = {k: re.sub(r"{\w+}", "", text) for k, text in en.items()}
    web = ("web.", *(f"{app}.web." for app in APP_STATIC))
    same = [k for k in en if k.startswith(web) and en[k] == zh[k] and re.search(r"[A-Za-z]{3}", words[k])]
    # A language's own name is the same in every language, and so is the product's name in the title pattern.
    assert same == ["web.lang.en", "web.title"]


# ---- the scanners catch what they should (so the tests above can fail) -----------------------------------------------


def test_the_html_scanner_flags_literal_text_and_attributes() -> None:
    problems, keys = scan_html(
        '<button data-i18n="web.chat.send"></button><p>Hello</p><input placeholder="Your name">'
        '<span title="Tip" data-i18n-title="web.x"></span><p>确定</p><script>const a = "x y";</script>'
    )
    assert len(problems) == 4
    assert keys == {"web.chat.send", "web.x"}


@pytest.mark.parametrize(
    "snippet",
    [
        'node.textContent = "Approve all";',
        'h("span", {}, "确定")',
        "h('p', {}, `Box ${n} is full`)",
        'const label = "Cancel";',
        "el.innerHTML = value;",
        'alert(t("web.x"));',
    ],
)
def test_the_js_scanner_flags_text_for_people(snippet: str) -> None:
    problems, _ = scan_js(snippet)
    assert problems


def test_the_js_scanner_lets_technical_literals_and_catalog_text_through() -> None:
    source = """
    // comments may say what they like: don't "flag" this
    const x = h("li", { class: ["msg", "user"], "aria-hidden": "true" }, t("web.chat.send", { n: 1 }), "✓");
    const url = `/api/runs/${encodeURIComponent(id)}/events?follow=${live ? "true" : `${x}`}`;
    if (event.key === "Enter") { fetch(url, { headers: { "Content-Type": "application/json" } }); }
    """
    problems, keys = scan_js(source)
    assert problems == []
    assert keys == {"web.chat.send"}
    assert "/api/runs/" in js_strings(source) and "true" in js_strings(source)
