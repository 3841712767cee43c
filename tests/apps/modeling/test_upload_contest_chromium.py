"""A contest problem brought through the page, in headless Chromium against the real modeling app (no team run): the
statement a PDF, the data an .xlsx workbook, picked in the page's file inputs; the page shows the tasks read from
the PDF and the tables the workbook is read as, and the team can start; a PDF that needs a password is refused with
the server's one line in the page's language. Screenshots in test-artifacts/web/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from consulta.apps import get_app
from consulta.frontends.web import create_app
from consulta.i18n import t as said
from frontends.web.conftest import running_server, settings_for
from frontends.web.test_browser import browser, open_page  # noqa: F401 - the fixtures: one browser for the module

from .contest_files import ELEPHANTS, pdf_bytes, xlsx_bytes

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

HERD = {"Female counts": [["age", "count"], [0, 310], [1, 288]], "Males": [["age", "count"], [0, 305], [1, 270]]}


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_a_pdf_statement_and_an_xlsx_workbook_through_the_page(open_page: Any, tmp_path: Path, lang: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    script = tmp_path / "noted.yaml"
    script.write_text("- text: Noted.\n", encoding="utf-8")
    statement = tmp_path / "2024_MCM_A.pdf"
    statement.write_bytes(pdf_bytes(ELEPHANTS))
    workbook = tmp_path / "herd.xlsx"
    workbook.write_bytes(xlsx_bytes(HERD))
    locked = tmp_path / "locked.pdf"
    locked.write_bytes(pdf_bytes(ELEPHANTS, user_password="s3cret", owner_password="chair"))
    app = create_app(app=get_app("modeling"), settings=settings_for(home, script, lang=lang))
    with running_server(app) as base:
        p = open_page(base, lang)
        t, page = p.t, p.page
        assert "pdf" in (page.get_attribute("#mp-statement", "accept") or "")
        assert ".xlsx" in (page.get_attribute("#mp-data", "accept") or "")

        page.set_input_files("#mp-statement", str(statement))
        page.locator("#mp-task-list .mp-task").nth(2).wait_for()
        assert page.locator("#mp-task-list .mp-task").count() == 3
        assert "2024_MCM_A.pdf" in p.text("#mp-files")
        page.set_input_files("#mp-data", str(workbook))
        page.locator('#mp-files .mp-file[data-name="herd.xlsx"]').wait_for()
        page.locator("#mp-start:not([disabled])").wait_for()
        tables = t["web.list_separator"].join(["herd.Female_counts.csv", "herd.Males.csv"])
        assert p.text('#mp-files .mp-file[data-name="herd.xlsx"] .mp-tables') == t[
            "modeling.web.problem.tables"
        ].format(tables=tables)
        p.shot(f"modeling-contest-upload-{lang}-01-tasks")

        page.set_input_files("#mp-statement", str(locked))
        refused = page.locator("#mp-status.bad")
        refused.wait_for()
        assert refused.inner_text() == said("modeling.problem.pdf_encrypted", lang, file="locked.pdf")
        assert page.locator("#mp-task-list .mp-task").count() == 3  # the PDF before it stays
        p.errors[:] = [e for e in p.errors if "status of 422" not in e]  # the browser's log line of the refusal
        p.shot(f"modeling-contest-upload-{lang}-02-refused")
        assert p.errors == []
        p.close()
