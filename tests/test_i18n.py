"""Both catalogs have every key, and every key the code uses exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from consulta.i18n import catalog, chinese_number, normalize_lang, t

SRC = Path(__file__).resolve().parents[1] / "src" / "consulta"


def test_catalogs_have_the_same_keys_and_the_seed_keys() -> None:
    en, zh = catalog("en"), catalog("zh-CN")
    assert set(en) == set(zh)
    for key in (
        "ai.question.title",
        "ai.question.asking",
        "ai.question.cancel",
        "ai.question.confirm",
        "ai.question.timeout",
    ):
        assert key in en
    assert (
        zh["ai.question.title"] == "Agent 提问"
        and en["ai.question.timeout"] == "Question timed out, agent will continue"
    )


def test_every_key_used_in_the_code_exists() -> None:
    used: set[str] = set()
    for path in SRC.rglob("*.py"):
        used |= set(re.findall(r"""\bt\(\s*["']([a-z][\w.]+)["']""", path.read_text(encoding="utf-8")))
        used |= set(
            re.findall(
                r"""["']((?:cli|col|ai|web|qt|mcp|ln2|ledger)\.[a-z_.]+)["']""", path.read_text(encoding="utf-8")
            )
        )
    assert used, "no catalog keys found: the scan is broken"
    missing = sorted(k for k in used if k not in catalog("en") or k not in catalog("zh-CN"))
    assert missing == []


def test_placeholders_match_between_languages() -> None:
    en, zh = catalog("en"), catalog("zh-CN")
    for key in en:
        assert set(re.findall(r"{(\w+)", en[key])) == set(re.findall(r"{(\w+)", zh[key])), key


def test_lang_normalisation() -> None:
    assert normalize_lang("zh_CN") == normalize_lang("zh") == "zh-CN"
    assert normalize_lang("fr") == "en"
    assert t("cli.plan.applied", "zh", audit_ids="a_1") == "已执行。审计记录：a_1"


GENERIC_CHAT_WORDS = ("web.chat.empty", "web.chat.hint", "web.chat.placeholder", "qt.chat.placeholder")
"""The chat's words on every app's page and window: an app may word them its own way (`<app>.<key>`)."""


def test_each_app_words_the_chat_its_own_way_and_the_generic_words_name_no_app() -> None:
    from consulta.i18n import t_app

    for lang in ("en", "zh-CN"):
        words = catalog(lang)
        for key in ("web.chat.empty", "web.chat.hint", "qt.chat.placeholder"):
            own = {app: t_app(app, key, lang) for app in ("ln2", "tutor")}
            assert own == {app: words[f"{app}.{key}"] for app in own} and len(set(own.values())) == 2, key
            assert t_app("probe", key, lang) == words[key] not in own.values()  # an app without its own words
        for key in GENERIC_CHAT_WORDS:
            assert not re.search(r"inventory|tube|K562|pandas|dataset|库存|冻存|数据集", words[key], re.IGNORECASE), (
                lang,
                key,
            )
    assert "pandas" in t_app("tutor", "web.chat.empty", "en") and "dataset" in t_app("tutor", "web.chat.hint", "en")
    assert "数据集" in t_app("tutor", "web.chat.empty", "zh-CN") and "K562" in t_app(
        "ln2", "qt.chat.placeholder", "zh-CN"
    )
    assert t_app("ln2", "qt.window.title", "en", app="ln2") == t("qt.window.title", "en", app="ln2")  # values as for t


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("三", 3),
        ("两", 2),
        ("零", 0),
        ("十", 10),
        ("十二", 12),
        ("二十", 20),
        ("三十五", 35),
        ("九十九", 99),
        ("12", 12),
    ],
)
def test_a_chinese_number_is_read_as_people_write_it(raw: str, value: int) -> None:
    assert chinese_number(raw) == value


@pytest.mark.parametrize("raw", ["", "百", "一二", "十十", "二十零", "零十", "three", "１２"])
def test_what_is_no_chinese_number_reads_as_none(raw: str) -> None:
    assert chinese_number(raw) is None
