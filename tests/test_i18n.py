"""Both catalogs have every key, and every key the code uses exists."""

from __future__ import annotations

import re
from pathlib import Path

from consulta.i18n import catalog, normalize_lang, t

SRC = Path(__file__).resolve().parents[1] / "src" / "consulta"


def test_catalogs_have_the_same_keys_and_the_seed_keys() -> None:
    en, zh = catalog("en"), catalog("zh-CN")
    assert set(en) == set(zh)
    for key in ("ai.question.title", "ai.question.asking", "ai.question.cancel", "ai.question.confirm", "ai.question.timeout"):
        assert key in en
    assert zh["ai.question.title"] == "Agent 提问" and en["ai.question.timeout"] == "Question timed out, agent will continue"


def test_every_key_used_in_the_code_exists() -> None:
    used: set[str] = set()
    for path in SRC.rglob("*.py"):
        used |= set(re.findall(r"""\bt\(\s*["']([a-z][\w.]+)["']""", path.read_text(encoding="utf-8")))
        used |= set(re.findall(r"""["']((?:cli|col|ai|web|qt|mcp|ln2|ledger)\.[a-z_.]+)["']""", path.read_text(encoding="utf-8")))
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
