"""The shipped question bank: items, templates, difficulty keywords and references, loaded into quiz's tables.

`data/bank/items/*.yaml` hold the test items (each file one category and language: multiple choice with 4-5 choices,
true/false, short answer with its keywords; each with a 1-10 difficulty, a topic and an explanation). Every item is
also a question template (seed tool 2's few-shot examples: its topic is the template's domain). `keywords.yaml`
holds each category's keywords and concepts by difficulty band, per language (seed tool 3). (The references tool 6
cites are quiz-judge's `data/references.yaml`.)

`ensure_bank(engine)` loads what the tables lack (idempotent: an item is known by its content hash, a template by its
item's id, a keyword row by difficulty, category and language), so a database is filled on first use and a second
call changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import threading
import unicodedata
import uuid
from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator
from sqlalchemy import select
from sqlalchemy.engine import Engine

from ...runtime import utcnow
from ._db import create_tables, keywords, questions, templates

__all__ = [
    "CATEGORIES",
    "ITEM_TYPES",
    "LANGS",
    "BankItem",
    "Concept",
    "bank_items",
    "content_hash",
    "ensure_bank",
    "keyword_rows",
]

CATEGORIES = ("technical", "business", "general")
ITEM_TYPES = ("multiple_choice", "true_false", "short_answer")
LANGS = ("en", "zh-CN")
_NAMESPACE = uuid.UUID("6f1c1e7e-2a41-4bd6-9f0c-5a0d6c3b7a11")
"""Bank items get ids derived from their content hash: the same item has the same id in every database."""

ItemType = Literal["multiple_choice", "true_false", "short_answer"]
Category = Literal["technical", "business", "general"]


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def content_hash(*, item_type: str, stem: str, choices: list[str] | None, lang: str) -> str:
    """What makes two saved questions the same one: type, stem and choices (whitespace and case aside), language."""
    body = {"t": item_type, "s": _norm(stem), "c": [_norm(c) for c in choices or []], "l": lang}
    return hashlib.sha256(json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


class BankItem(BaseModel):
    """One shipped item, as written in the bank's YAML (checked when the bank is read)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: ItemType
    stem: str = Field(min_length=1, max_length=250)
    choices: list[str] | None = None
    answer: str | None = None
    keywords: list[str] | None = None
    difficulty: int = Field(ge=1, le=10)
    topic: str = Field(min_length=1, max_length=100)
    explanation: str = Field(min_length=1)
    category: Category
    lang: Literal["en", "zh-CN"]

    @model_validator(mode="after")
    def _answer_fits(self) -> BankItem:
        if self.type == "multiple_choice":
            if (
                not self.choices
                or not 4 <= len(self.choices) <= 5
                or len(set(map(_norm, self.choices))) != len(self.choices)
            ):
                raise ValueError(f"{self.stem[:40]!r}: multiple choice needs 4-5 distinct choices")
            if self.answer not in self.choices:
                raise ValueError(f"{self.stem[:40]!r}: the answer {self.answer!r} is not among its choices")
        elif self.type == "true_false":
            if self.answer not in ("True", "False") or self.choices:
                raise ValueError(f"{self.stem[:40]!r}: a true/false item's answer is True or False, with no choices")
        elif not self.keywords:
            raise ValueError(f"{self.stem[:40]!r}: a short-answer item needs its keywords")
        return self

    @property
    def hash(self) -> str:
        return content_hash(item_type=self.type, stem=self.stem, choices=self.choices, lang=self.lang)

    @property
    def id(self) -> str:
        return str(uuid.uuid5(_NAMESPACE, self.hash))


class Concept(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    acronym: str = ""
    definition: str
    key_points: list[str] = Field(min_length=1)


def _data(*parts: str) -> Any:
    return resources.files(__package__).joinpath("data", "bank", *parts)


@cache
def bank_items() -> tuple[BankItem, ...]:
    """Every shipped item (a duplicate stem is an error in the bank, not a second item)."""
    items: list[BankItem] = []
    folder = _data("items")
    for part in sorted((f for f in folder.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name):
        doc = yaml.safe_load(part.read_text(encoding="utf-8"))
        for raw in doc["items"]:
            items.append(BankItem(category=doc["category"], lang=doc["lang"], **raw))
    seen: dict[str, str] = {}
    for item in items:
        if item.hash in seen:
            raise ValueError(f"The bank has the item {item.stem[:60]!r} twice; keep one.")
        seen[item.hash] = item.stem
    return tuple(items)


@cache
def _keyword_bands() -> dict[str, Any]:
    return yaml.safe_load(_data("keywords.yaml").read_text(encoding="utf-8"))


def keyword_rows() -> list[dict[str, Any]]:
    """One row per (difficulty 1-10, category, language): the keywords and concepts of the bands covering it."""
    rows = []
    for category, by_lang in _keyword_bands().items():
        for lang, bands in by_lang.items():
            for difficulty in range(1, 11):
                words: list[str] = []
                concepts: list[dict[str, Any]] = []
                for band in bands:
                    low, high = band["levels"]
                    if low <= difficulty <= high:
                        words.extend(w for w in band["keywords"] if w not in words)
                        concepts.extend(Concept.model_validate(c).model_dump() for c in band["concepts"])
                rows.append(
                    {
                        "difficulty": difficulty,
                        "category": category,
                        "lang": lang,
                        "keywords": words,
                        "concepts": concepts,
                    }
                )
    return rows


_load_lock = threading.Lock()


def ensure_bank(engine: Engine) -> None:
    """Create quiz's tables and load the shipped bank into them where missing (idempotent, one transaction)."""
    with _load_lock:
        create_tables(engine)
        now = utcnow()
        items = bank_items()
        with engine.begin() as conn:
            have = set(conn.execute(select(questions.c.content_hash)).scalars())
            new = [i for i in items if i.hash not in have]
            if new:
                conn.execute(questions.insert(), [_question_row(i, now) for i in new])
            have_templates = set(conn.execute(select(templates.c.id)).scalars())
            fresh = [i for i in items if i.id not in have_templates]
            if fresh:
                conn.execute(templates.insert(), [_template_row(i) for i in fresh])
            have_keys = {
                tuple(r) for r in conn.execute(select(keywords.c.difficulty, keywords.c.category, keywords.c.lang))
            }
            rows = [r for r in keyword_rows() if (r["difficulty"], r["category"], r["lang"]) not in have_keys]
            if rows:
                conn.execute(
                    keywords.insert(),
                    [
                        {
                            **r,
                            "keywords": json.dumps(r["keywords"], ensure_ascii=False),
                            "concepts": json.dumps(r["concepts"], ensure_ascii=False),
                        }
                        for r in rows
                    ],
                )


def _question_row(item: BankItem, now: str) -> dict[str, Any]:
    return {
        "id": item.id,
        "item_type": item.type,
        "stem": item.stem,
        "choices": json.dumps(item.choices, ensure_ascii=False) if item.choices else None,
        "correct_key": item.answer if item.type != "short_answer" else None,
        "correct_keywords": json.dumps(item.keywords, ensure_ascii=False) if item.type == "short_answer" else None,
        "difficulty": item.difficulty,
        "categories": json.dumps([item.category]),
        "topic": item.topic,
        "lang": item.lang,
        "explanation": item.explanation,
        "source": "bank",
        "round_id": None,
        "session_id": None,
        "round_number": None,
        "validation_score": None,
        "content_hash": item.hash,
        "created_at": now,
    }


def _template_row(item: BankItem) -> dict[str, Any]:
    answer = item.answer if item.type != "short_answer" else ", ".join(item.keywords or [])
    return {
        "id": item.id,
        "stem": item.stem,
        "item_type": item.type,
        "choices": json.dumps(item.choices, ensure_ascii=False) if item.choices else None,
        "correct_answer": answer,
        "difficulty": item.difficulty,
        "category": item.category,
        "domain": item.topic,
        "lang": item.lang,
        "usage_count": 0,
        "avg_difficulty_score": float(item.difficulty),
    }
