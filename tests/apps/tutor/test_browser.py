"""The tutor's page in headless Chromium against a real server (uvicorn on a free port) with the scripted model, in
English and in Chinese: a file of the wrong type refused with a readable line, a CSV uploaded and listed, a message
sent, the assistant's reply in the chat, the instruction packet and the consultation (its verdict, the binding rule
that fired, its instruction updates) as cards. Screenshots in test-artifacts/web/."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from apps.tutor._folders import session_uploads
from consulta.apps.tutor._datasets import ACCEPTED_SUFFIXES
from consulta.frontends.web import create_app
from frontends.web.conftest import running_server, settings_for
from frontends.web.test_browser import browser, open_page  # noqa: F401 - the fixtures, shared with the ln2 page's tests

pytestmark = [pytest.mark.slow, pytest.mark.browser]

SCRIPT = resources.files("consulta.apps.tutor").joinpath("data", "scripts", "unsuitable_upload.yaml")
STUDENT_DATA = "name,city\nAda,Paris\nBo,Rome\nCy,Oslo\n"
PROMPTS = {"en": "I uploaded my data. Can I start task_2_1?", "zh-CN": "我上传了数据，可以开始task_2_1吗？"}
REPLY = {"en": "missing column(s): age", "zh-CN": "缺少列：age"}  # code says its own packet


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_upload_ask_and_read_the_turns_cards(open_page: Any, tmp_path: Path, lang: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    notes = tmp_path / "notes.md"
    notes.write_text("not a dataset", encoding="utf-8")
    data = tmp_path / "student_data.csv"
    data.write_text(STUDENT_DATA, encoding="utf-8")
    with (
        resources.as_file(SCRIPT) as script,
        running_server(create_app(app="tutor", settings=settings_for(home, Path(script), lang=lang))) as base,
    ):
        p = open_page(base, lang)
        t, page, name = p.t, p.page, f"tutor-{lang}"
        assert p.text("h1") == t["tutor.web.name"] and page.title() == t["web.title"].format(name=t["tutor.web.name"])
        assert p.text("#uploads-title") == t["tutor.web.uploads.title"]
        assert p.text("#upload-list") == t["tutor.web.uploads.empty"]
        assert p.text("#turn-state") == t["tutor.web.turn.state.none"]
        assert p.text("#turn-cards") == t["tutor.web.turn.empty"]

        # a type the tutor does not take: a readable line in the reader's language, nothing sent
        page.set_input_files("#upload-input", str(notes))
        status = page.locator("#upload-status.bad")
        status.wait_for()
        types = t["web.list_separator"].join(ACCEPTED_SUFFIXES)
        assert status.inner_text() == t["tutor.web.error.unsupported_file_type"].format(name="notes.md", types=types)
        assert status.get_attribute("role") == "alert"
        assert not list(session_uploads(home).iterdir())
        p.shot(f"{name}-01-refused")

        page.set_input_files("#upload-input", str(data))
        page.locator('#upload-list .upload[data-name="student_data.csv"]').wait_for()
        assert (
            page.locator("#upload-status.good").inner_text().startswith(t["tutor.web.uploads.done"].split("{name}")[0])
        )
        assert (session_uploads(home) / "student_data.csv").read_text(encoding="utf-8") == STUDENT_DATA
        assert page.get_attribute("#upload-input", "accept") == ",".join(ACCEPTED_SUFFIXES)
        # a file dropped on the panel goes the same way
        page.evaluate(
            """(text) => {
                const files = new DataTransfer();
                files.items.add(new File([text], "more_data.csv", { type: "text/csv" }));
                document.querySelector("#uploads").dispatchEvent(new DragEvent("drop", { dataTransfer: files, bubbles: true, cancelable: true }));
            }""",
            STUDENT_DATA,
        )
        page.locator('#upload-list .upload[data-name="more_data.csv"]').wait_for()
        p.shot(f"{name}-02-uploaded")

        page.fill("#prompt", PROMPTS[lang])
        page.press("#prompt", "Enter")
        page.locator(".msg.agent", has_text=REPLY[lang]).wait_for()
        page.locator("#turn-state.answered").wait_for()
        packet = page.locator(".card.packet.accepted")
        packet.wait_for()
        text = packet.inner_text()
        assert t["tutor.web.packet.title"] in text and t["tutor.web.packet.accepted"] in text
        assert "task_2_1" in text and t["tutor.web.task_status.blocked"] in text
        assert t["tutor.web.packet.blocked"] in text and "analysis" in text and "consult_0001" in text
        card = page.locator('.card.consultation[data-id="consult_0001"]')
        text = card.inner_text()
        assert t["tutor.web.expert.data_inspector"] in text and t["tutor.web.output.suitability_judgment"] in text
        assert t["tutor.web.verdict.not_suitable"] in text and "age" in text
        assert t["tutor.web.consultation.rules"] in text and "dataset_not_suitable → require_new_dataset" in text
        assert t["tutor.web.consultation.updates"] in text
        page.locator(
            ".panel.turn"
        ).scroll_into_view_if_needed()  # (the cards are drawn again as the turn's events go by)
        p.shot(f"{name}-03-cards")

        # a reload draws the same cards from the store
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        page.locator('.card.consultation[data-id="consult_0001"]').wait_for()
        page.locator("#turn-state.answered").wait_for()
        p.close()  # before the server stops: the reloaded page may still be loading
