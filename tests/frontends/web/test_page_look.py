"""The page's look in headless Chromium: one title pattern for every app, `?lang=` honoured, a dark theme that
follows the system's preference, and a toggle whose choice is remembered across reloads. One server and one browser
for the module; screenshots in test-artifacts/web/."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from consulta.frontends.web import create_app
from consulta.i18n import catalog

from .conftest import running_server, settings_for
from .test_browser import ARTIFACTS, browser  # noqa: F401 - the module's Chromium

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("look")
    with running_server(create_app(app="ln2", settings=settings_for(home))) as url:
        yield url


def _open(browser: Any, url: str, *, scheme: str = "light", locale: str = "en") -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme=scheme, locale=locale)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")
    assert not errors, errors
    return context, page


def _background(page: Any) -> str:
    return page.evaluate("getComputedStyle(document.body).backgroundColor")


def test_lang_in_the_address_wins_and_the_title_has_one_pattern(browser: Any, base: str) -> None:
    context, page = _open(browser, f"{base}/?lang=zh-CN", locale="en-US")
    try:
        zh = catalog("zh-CN")
        assert page.evaluate("document.documentElement.lang") == "zh-CN"
        assert page.inner_text("#send") == zh["web.chat.send"]
        assert page.title() == zh["web.title"].format(name=zh["ln2.web.name"]) == "液氮库存助手 · Consulta"
        page.screenshot(path=str(ARTIFACTS / "look-lang-zh.png"))
        page.select_option("#lang", "en")  # the person's choice, made after the link's, survives a reload
        page.locator("#send", has_text=catalog("en")["web.chat.send"]).wait_for()
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        assert page.evaluate("document.documentElement.lang") == "en" and "lang=en" in page.url
    finally:
        context.close()
    context, page = _open(browser, f"{base}/?lang=fr", locale="en-US")  # not a language of ours: the usual choice
    try:
        assert page.evaluate("document.documentElement.lang") == "en"
    finally:
        context.close()


def test_dark_follows_the_system_and_the_toggle_is_remembered(browser: Any, base: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context, light = _open(browser, base, scheme="light")
    light_bg = _background(light)
    context.close()
    context, page = _open(browser, base, scheme="dark")
    try:
        dark_bg = _background(page)
        assert dark_bg != light_bg
        assert page.get_attribute("#theme", "aria-pressed") == "true"
        page.screenshot(path=str(ARTIFACTS / "look-dark.png"))
        page.click("#theme")  # the person prefers light here, whatever the system says
        assert _background(page) == light_bg and page.get_attribute("#theme", "aria-pressed") == "false"
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        assert _background(page) == light_bg, "the choice is remembered across a reload"
        page.click("#theme")
        assert _background(page) == dark_bg
    finally:
        context.close()


def test_the_grid_marks_what_the_answer_is_about_and_arrows_move_in_it(browser: Any, base: str) -> None:
    """The ambiguous request (scripted double): the K562 tubes the look-up found are marked, then the one tube the
    staged plan takes out, then the applied change; the grid is one tab stop that arrow keys move within."""
    from .conftest import AMBIGUOUS

    context, page = _open(browser, base)
    try:
        page.click('.tab[data-box="1"]')
        page.click('.cell[data-box="1"][data-pos="1"]')  # a tube of box 1 in the tube pane
        page.locator("#tube", has_text="A1").wait_for()
        page.fill("#prompt", AMBIGUOUS)
        page.press("#prompt", "Enter")
        page.locator(".question-form").wait_for()
        found = page.locator(".cell.found")
        assert found.count() >= 3
        assert all("K562" in (found.nth(i).get_attribute("title") or "") for i in range(found.count()))
        page.screenshot(path=str(ARTIFACTS / "look-grid-found.png"))
        page.select_option(".question-form select", "K562-dTAG-BRD4")
        page.locator(".question-form button[type=submit]").click()
        page.locator(".cell.staged").first.wait_for()
        assert page.locator(".cell.staged").count() == 1 and page.locator(".cell.found").count() == 0
        page.locator(".card.plan button.primary:not([disabled])").click()
        page.locator(".cell.changed").first.wait_for()
        assert page.locator(".cell.staged").count() == 0
        # the tube pane follows the applied change to its box: box 2's A1 (now empty), not box 1's tube
        assert page.locator('.cell.selected[data-box="2"][data-pos="1"]').count() == 1
        en = catalog("en")
        page.locator("#tube", has_text=en["ln2.web.tube.where"].format(box=2, label="A1")).wait_for()
        assert en["ln2.web.tube.empty"] in page.inner_text("#tube")
        page.screenshot(path=str(ARTIFACTS / "look-grid-applied.png"))

        assert page.locator(".cell[tabindex='0']").count() == 1
        first = page.locator(".cell[tabindex='0']")
        box, position = first.get_attribute("data-box"), int(first.get_attribute("data-pos") or 0)
        first.focus()
        page.keyboard.press("ArrowRight")
        focused = page.evaluate("[document.activeElement.dataset.box, Number(document.activeElement.dataset.pos)]")
        assert focused == [box, position + 1]
        assert page.locator(".cell[tabindex='0']").count() == 1
    finally:
        context.close()


APPS = ["ln2", "tutor", "quiz", "advisor", "modeling"]
RAW_KEY = r"\b(?:web|ai|ln2|tutor|quiz|advisor|modeling)\.[a-z0-9_]+\.[a-z0-9_.]+\b"
"""A catalog key shown as itself: the page's words for it are missing."""


@pytest.mark.parametrize("app", APPS)
def test_every_app_s_page_is_dark_with_the_system_titled_alike_and_fully_worded(
    browser: Any, app: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Each of the five pages, as a new Chinese reader on a dark system sees it: the dark theme, the title
    '{name} · Consulta', no key shown in place of its words, no script error; then the toggle to light."""
    import re

    zh = catalog("zh-CN")
    home = tmp_path_factory.mktemp(f"look-{app}")
    with running_server(create_app(app=app, settings=settings_for(home))) as url:
        context, page = _open(browser, f"{url}/?lang=zh-CN", scheme="dark", locale="en-US")
        try:
            dark_bg = _background(page)
            assert page.get_attribute("#theme", "aria-pressed") == "true"
            assert page.title() == zh["web.title"].format(name=zh[f"{app}.web.name"])
            assert page.evaluate("document.documentElement.lang") == "zh-CN"
            shown = page.inner_text("body")
            assert not re.findall(RAW_KEY, shown), "a key shown in place of its words"
            # a file picker's face is in the page's words, never the browser's "Choose File / No file chosen"
            assert page.locator("input[type=file]:not(.sr-only)").count() == 0
            page.screenshot(path=str(ARTIFACTS / f"look-dark-{app}-zh.png"))
            page.click("#theme")
            assert _background(page) != dark_bg and page.get_attribute("#theme", "aria-pressed") == "false"
        finally:
            context.close()
