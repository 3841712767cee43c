"""Seed 004's six tools over quiz's tables, with the seed's validation, timeouts, retries, cache and fallbacks.

`QuizTools(engine, queue=…, judge=…)` is the Python face: `await tools.get_user_profile(user_id)` and so on, with
the seed's signatures; bad input raises the seed's ValueError / TypeError (`InvalidArgument`, which names the field).
`tools.tool_defs()` gives the same six as runtime tools for an agent or an MCP client: there a bad argument is the
structured `invalid_arguments` error naming the field, never a traceback.

Policies (the seed's tables): timeouts 3 / 5 / 2 / 10 / 10 / 15 s; tool 1 retried 3 times with exponential backoff,
tools 2 and 3 once, each retry inside the tool's time bound; tool 3 cached in memory for one hour (`Cache`, its clock
injectable); fallbacks verbatim: the default profile, `[]`, the default keywords, `is_valid=False` / `reject`,
`score=50, is_correct=False`. Tool 5 has no fallback value: a save the database refuses goes to the durable retry
queue (`RetryQueue`) and the answer says `success=False, queued_for_retry=True`.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field
from sqlalchemy import and_, func, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from ...runtime import Cache, Fallback, Retry, Timeout, ToolDef, ToolError, ToolPolicy, apply_policies, utcnow
from ._bank import CATEGORIES, ITEM_TYPES, content_hash, ensure_bank
from ._db import keywords, questions, responses, templates
from ._profiles import DEFAULT_PROFILE, check_user_id, load_profile
from ._retry_queue import RetryQueue

__all__ = [
    "DEFAULT_KEYWORDS",
    "KEYWORD_CACHE_TTL",
    "TIMEOUTS",
    "TOOL_NAMES",
    "InvalidArgument",
    "InvalidArgumentType",
    "QuizTools",
    "parse_round_id",
]

TOOL_NAMES = (
    "get_user_profile",
    "search_question_templates",
    "get_difficulty_keywords",
    "validate_question_quality",
    "save_generated_question",
    "score_and_explain",
)
TIMEOUTS = dict(zip(TOOL_NAMES, (3.0, 5.0, 2.0, 10.0, 10.0, 15.0), strict=True))
"""The seed's time bound of each tool, in seconds."""
KEYWORD_CACHE_TTL = 3600.0
DIFFICULTY_RANGE = 1.5
MAX_TEMPLATES = 10
_RETRIABLE = (SQLAlchemyError, OSError)
_BACKSTOP = 1.0
"""Seconds past a judged tool's budget before its time bound cuts it off (the judge answers within the budget)."""

DEFAULT_KEYWORDS: dict[str, Any] = {
    "keywords": ["Communication", "Problem Solving", "Teamwork", "Critical Thinking", "Adaptability"],
    "concepts": [
        {
            "name": "Effective Communication",
            "acronym": "EC",
            "definition": "Clear and efficient exchange of information",
            "key_points": ["Clear message formulation", "Active listening", "Feedback exchange"],
        },
        {
            "name": "Problem-Solving Approach",
            "acronym": "PSA",
            "definition": "Systematic method for addressing challenges",
            "key_points": ["Define the problem", "Generate solutions", "Evaluate and implement"],
        },
    ],
    "example_questions": [
        {
            "stem": "What is effective communication in a team?",
            "type": "short_answer",
            "difficulty_score": 5.0,
            "answer_summary": "Clear exchange of information with active listening",
        }
    ],
}
"""The seed's default keywords (tool 3's answer when the database cannot give one), echoing the asked difficulty
and category."""

VALIDATION_FALLBACK: dict[str, Any] = {
    "is_valid": False,
    "score": 0.5,
    "rule_score": 0.0,
    "final_score": 0.5,
    "feedback": "Validation is unavailable right now; the question was not judged.",
    "issues": ["validation_unavailable"],
    "recommendation": "reject",
}
SCORE_FALLBACK: dict[str, Any] = {
    "is_correct": False,
    "score": 50,
    "explanation": "Scoring is unavailable right now; this answer was not judged.",
    "keyword_matches": [],
    "feedback": None,
}


class InvalidArgument(ValueError):
    """The seed's ValueError, naming the argument at fault."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name


class InvalidArgumentType(TypeError):
    """The seed's TypeError, naming the argument at fault."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name


# ---- the seed's checks ------------------------------------------------------------------------------------------


def _difficulty(value: Any, name: str = "difficulty") -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidArgumentType(name, f"{name} must be an integer, got {type(value).__name__}")
    if isinstance(value, float):
        if not value.is_integer():
            raise InvalidArgumentType(name, f"{name} must be an integer, got {value}")
        value = int(value)
    if not 1 <= value <= 10:
        raise InvalidArgument(name, f"{name} must be 1-10, got {value}")
    return value


def _category(value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentType("category", f"category must be a string, got {type(value).__name__}")
    if value.strip().lower() not in CATEGORIES:
        raise InvalidArgument("category", f"category must be one of {', '.join(CATEGORIES)}, got {value[:40]!r}")
    return value.strip().lower()


def _lang(value: Any) -> str:
    if value not in ("en", "zh-CN"):
        raise InvalidArgument("lang", f"lang must be en or zh-CN, got {str(value)[:20]!r}")
    return value


def _interests(value: Any) -> list[str]:
    if not isinstance(value, list):
        raise InvalidArgumentType("interests", f"interests must be a list of strings, got {type(value).__name__}")
    if not 1 <= len(value) <= 10:
        raise InvalidArgument("interests", f"interests must have 1-10 items, got {len(value)}")
    for item in value:
        if not isinstance(item, str):
            raise InvalidArgumentType("interests", f"each interest must be a string, got {type(item).__name__}")
        if not 1 <= len(item) <= 50:
            raise InvalidArgument("interests", f"each interest must be 1-50 characters, got {len(item)}")
    return value


def parse_round_id(round_id: Any) -> tuple[str, int, str]:
    """`session_id_round_number_timestamp` → (session_id, round_number, timestamp), split from the right, so a
    session id with underscores of its own (`sess_abc_1`) is kept whole."""
    if not isinstance(round_id, str):
        raise InvalidArgumentType("round_id", f"round_id must be a string, got {type(round_id).__name__}")
    parts = round_id.rsplit("_", 2)
    if len(parts) != 3 or not all(p.strip() for p in parts) or not parts[1].isdigit():
        raise InvalidArgument(
            "round_id",
            f"round_id must be session_id_round_number_timestamp (e.g. sess_1_2025-11-06T10:30:00Z), got {round_id[:80]!r}",
        )
    return parts[0], int(parts[1]), parts[2]


def _str_list(value: Any, name: str) -> list[str]:
    if not isinstance(value, list):
        raise InvalidArgumentType(name, f"{name} must be a list of strings, got {type(value).__name__}")
    if any(not isinstance(v, str) for v in value):
        raise InvalidArgumentType(name, f"every item of {name} must be a string")
    return value


def _check_save(
    item_type: Any,
    stem: Any,
    choices: Any,
    correct_key: Any,
    correct_keywords: Any,
    difficulty: Any,
    categories: Any,
    round_id: Any,
    validation_score: Any,
    explanation: Any,
) -> dict[str, Any]:
    """Tool 5's arguments checked (the seed's rules) and normalised, or InvalidArgument / InvalidArgumentType."""
    if not isinstance(item_type, str):
        raise InvalidArgumentType("item_type", f"item_type must be a string, got {type(item_type).__name__}")
    if item_type not in ITEM_TYPES:
        raise InvalidArgument("item_type", f"item_type must be one of {', '.join(ITEM_TYPES)}, got {item_type[:40]!r}")
    if not isinstance(stem, str):
        raise InvalidArgumentType("stem", f"stem must be a string, got {type(stem).__name__}")
    if not stem.strip() or len(stem) > 2000:
        raise InvalidArgument("stem", f"stem must be 1-2000 characters, got {len(stem.strip())}")
    if choices is not None:
        choices = _str_list(choices, "choices")
    if item_type == "multiple_choice":
        if not choices or not 4 <= len(choices) <= 5:
            raise InvalidArgument("choices", f"multiple_choice needs 4-5 choices, got {len(choices or [])}")
        if len({c.strip().casefold() for c in choices}) != len(choices) or any(not c.strip() for c in choices):
            raise InvalidArgument("choices", "choices must be distinct and non-empty")
        if correct_key is None:
            raise InvalidArgument("correct_key", "correct_key is required for multiple_choice")
        if not isinstance(correct_key, str):
            raise InvalidArgumentType("correct_key", f"correct_key must be a string, got {type(correct_key).__name__}")
        if correct_key not in choices:
            raise InvalidArgument("correct_key", f"correct_key {correct_key[:60]!r} must be one of the choices")
    elif item_type == "true_false":
        if correct_key is None:
            raise InvalidArgument("correct_key", "correct_key is required for true_false")
        if not isinstance(correct_key, str):
            raise InvalidArgumentType("correct_key", f"correct_key must be a string, got {type(correct_key).__name__}")
        if correct_key.strip().lower() not in ("true", "false"):
            raise InvalidArgument(
                "correct_key", f"correct_key must be True or False for true_false, got {correct_key[:20]!r}"
            )
        correct_key = correct_key.strip().capitalize()
    else:
        if correct_keywords is None:
            raise InvalidArgument("correct_keywords", "correct_keywords is required for short_answer")
        correct_keywords = _str_list(correct_keywords, "correct_keywords")
        if not correct_keywords or any(not k.strip() for k in correct_keywords):
            raise InvalidArgument("correct_keywords", "correct_keywords must be a non-empty list of non-empty strings")
    difficulty = _difficulty(difficulty)
    categories = _str_list(categories, "categories")
    if not categories:
        raise InvalidArgument("categories", "categories cannot be empty")
    if any(c.strip().lower() not in CATEGORIES for c in categories):
        raise InvalidArgument("categories", f"each category must be one of {', '.join(CATEGORIES)}")
    session_id, round_number, _ = parse_round_id(round_id)
    if validation_score is not None:
        if isinstance(validation_score, bool) or not isinstance(validation_score, int | float):
            raise InvalidArgumentType(
                "validation_score", f"validation_score must be a number, got {type(validation_score).__name__}"
            )
        if not 0.0 <= float(validation_score) <= 1.0:
            raise InvalidArgument("validation_score", f"validation_score must be 0.0-1.0, got {validation_score}")
        validation_score = float(validation_score)
    if explanation is not None and not isinstance(explanation, str):
        raise InvalidArgumentType("explanation", f"explanation must be a string, got {type(explanation).__name__}")
    return {
        "item_type": item_type,
        "stem": stem.strip(),
        "choices": choices if item_type == "multiple_choice" else None,
        "correct_key": correct_key if item_type != "short_answer" else None,
        "correct_keywords": correct_keywords if item_type == "short_answer" else None,
        "difficulty": difficulty,
        "categories": list(dict.fromkeys(c.strip().lower() for c in categories)),
        "round_id": round_id,
        "session_id": session_id,
        "round_number": round_number,
        "validation_score": validation_score,
        "explanation": explanation,
    }


# ---- policies -------------------------------------------------------------------------------------------------


def seed_fallback(value: Callable[[dict[str, Any]], Any]) -> Fallback:
    """The seed's fallback for failures of the work — never for bad input, which stays the caller's error."""

    def give(args: dict[str, Any], error: Any) -> Any:
        if isinstance(error, ValueError | TypeError):
            raise error
        return value(args)

    return Fallback(value=give)


def _retry(retries: int) -> Retry:
    return Retry(attempts=retries + 1, backoff=0.2, max_backoff=1.0, retry_on=_RETRIABLE)


@dataclass
class QuizTools:
    """The six tools over `engine` (quiz's tables, the shipped bank loaded on first use). `queue` keeps saves the
    database refused; `judge` (a `ModelJudge`) is the model's part of tools 4 and 6; `clock` is tool 3's cache clock."""

    engine: Engine
    queue: RetryQueue
    judge: Any = None
    clock: Callable[[], float] = time.monotonic
    timeouts: Mapping[str, float] = field(default_factory=lambda: dict(TIMEOUTS))
    """Each tool's time bound (default: the seed's)."""
    keyword_cache: Cache = field(init=False)

    def __post_init__(self) -> None:
        self._bank_loaded = False
        self._drain_thread: threading.Thread | None = None
        try:
            self._ready()
        except (
            SQLAlchemyError
        ):  # the database is away now: the tools' policies handle it, and it is loaded on first use
            pass
        self.keyword_cache = Cache(ttl=KEYWORD_CACHE_TTL, clock=self.clock)
        self._profile = self._policied(
            self._fetch_profile,
            "get_user_profile",
            seed_fallback(lambda a: {"user_id": a["user_id"], **copy.deepcopy(DEFAULT_PROFILE)}),
            _retry(3),
        )
        self._templates = self._policied(
            self._fetch_templates, "search_question_templates", seed_fallback(lambda a: []), _retry(1)
        )
        self._keywords = self._policied(
            self._fetch_keywords,
            "get_difficulty_keywords",
            seed_fallback(self._default_keywords),
            _retry(1),
            cache=self.keyword_cache,
        )
        self._insert = apply_policies(self._insert_row, [Timeout(seconds=self.timeouts["save_generated_question"])])

    def _ready(self) -> None:
        """quiz's tables and the shipped bank, loaded once the database can be reached."""
        if not self._bank_loaded:
            ensure_bank(self.engine)
            self._bank_loaded = True

    def _policied(
        self, fn: Callable[..., Any], name: str, fallback: Fallback, retry: Retry, *, cache: Cache | None = None
    ) -> Callable[..., Any]:
        """fallback(cache(timeout(retry(fn)))): every retry within the tool's time bound; failures never cached."""
        chain: list[ToolPolicy] = [
            fallback,
            *([cache] if cache is not None else []),
            Timeout(seconds=self.timeouts[name]),
            retry,
        ]
        return apply_policies(fn, chain)

    # ---- tool 1 -----------------------------------------------------------------------------------------------

    async def get_user_profile(self, user_id: str) -> dict[str, Any]:
        """Tool 1: the person's self-assessment profile (the seed's default profile for an unknown user)."""
        try:
            user_id = check_user_id(user_id)
        except TypeError as error:
            raise InvalidArgumentType("user_id", str(error)) from None
        except ValueError as error:
            raise InvalidArgument("user_id", str(error)) from None
        return await self._profile(user_id=user_id)

    def _fetch_profile(self, user_id: str) -> dict[str, Any]:
        self._ready()
        profile = load_profile(self.engine, user_id)
        if profile is None:
            return {"user_id": user_id, **copy.deepcopy(DEFAULT_PROFILE)}
        return profile.tool_result()

    # ---- tool 2 -----------------------------------------------------------------------------------------------

    async def search_question_templates(
        self, interests: list[str], difficulty: int, category: str, lang: str | None = None, limit: int = MAX_TEMPLATES
    ) -> list[dict[str, Any]]:
        """Tool 2: up to 10 (`limit`) templates of `category` within ±1.5 of `difficulty` whose domain matches an
        interest, the closest in difficulty first; `lang` keeps one language's."""
        interests = _interests(interests)
        difficulty = _difficulty(difficulty)
        category = _category(category)
        if lang is not None:
            lang = _lang(lang)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_TEMPLATES:
            raise InvalidArgument("limit", f"limit must be an integer 1-{MAX_TEMPLATES}, got {limit!r}")
        return await self._templates(
            interests=interests, difficulty=difficulty, category=category, lang=lang, limit=limit
        )

    def _fetch_templates(
        self, interests: list[str], difficulty: int, category: str, lang: str | None, limit: int
    ) -> list[dict[str, Any]]:
        self._ready()
        wanted = [i.strip().casefold() for i in interests if i.strip()]
        conditions = [
            templates.c.category == category,
            templates.c.difficulty >= difficulty - DIFFICULTY_RANGE,
            templates.c.difficulty <= difficulty + DIFFICULTY_RANGE,
        ]
        if lang is not None:
            conditions.append(templates.c.lang == lang)
        stats = (
            select(responses.c.question_id, func.count().label("n"), func.avg(responses.c.is_correct).label("rate"))
            .group_by(responses.c.question_id)
            .subquery()
        )
        query = (
            select(templates, stats.c.n, stats.c.rate)
            .outerjoin(stats, stats.c.question_id == templates.c.id)
            .where(and_(*conditions))
        )
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()

        def matches(domain: str) -> bool:
            d = domain.casefold()
            return any(w in d or d in w for w in wanted)

        found = [r for r in rows if matches(r["domain"])]
        found.sort(key=lambda r: (abs(r["difficulty"] - difficulty), -(r["rate"] or 0.0), r["id"]))
        return [
            {
                "id": r["id"],
                "stem": r["stem"],
                "type": r["item_type"],
                "choices": json.loads(r["choices"]) if r["choices"] else [],
                "correct_answer": r["correct_answer"],
                "correct_rate": round(float(r["rate"] or 0.0), 4),
                "usage_count": int(r["n"] or 0) + int(r["usage_count"] or 0),
                "avg_difficulty_score": float(r["avg_difficulty_score"] or r["difficulty"]),
                "domain": r["domain"],
                "lang": r["lang"],
            }
            for r in found[:limit]
        ]

    # ---- tool 3 -----------------------------------------------------------------------------------------------

    async def get_difficulty_keywords(self, difficulty: int, category: str, lang: str = "en") -> dict[str, Any]:
        """Tool 3: keywords, concepts and example questions for a difficulty and category (cached for one hour)."""
        difficulty = _difficulty(difficulty)
        category = _category(category)
        lang = _lang(lang)
        return await self._keywords(difficulty=difficulty, category=category, lang=lang)

    def _fetch_keywords(self, difficulty: int, category: str, lang: str) -> dict[str, Any]:
        self._ready()
        with self.engine.connect() as conn:
            row = (
                conn.execute(
                    select(keywords).where(
                        keywords.c.difficulty == difficulty, keywords.c.category == category, keywords.c.lang == lang
                    )
                )
                .mappings()
                .first()
            )
            examples = (
                conn.execute(
                    select(
                        questions.c.stem,
                        questions.c.item_type,
                        questions.c.difficulty,
                        questions.c.correct_key,
                        questions.c.correct_keywords,
                    )
                    .where(
                        questions.c.difficulty == difficulty,
                        questions.c.lang == lang,
                        questions.c.categories.like(f'%"{category}"%'),
                        questions.c.source == "bank",
                    )
                    .order_by(questions.c.id)
                    .limit(3)
                )
                .mappings()
                .all()
            )
        if row is None:
            return self._default_keywords({"difficulty": difficulty, "category": category})
        return {
            "difficulty": difficulty,
            "category": category,
            "keywords": json.loads(row["keywords"]) or DEFAULT_KEYWORDS["keywords"],
            "concepts": json.loads(row["concepts"]) or DEFAULT_KEYWORDS["concepts"],
            "example_questions": [
                {
                    "stem": e["stem"],
                    "type": e["item_type"],
                    "difficulty_score": float(e["difficulty"]),
                    "answer_summary": e["correct_key"] or ", ".join(json.loads(e["correct_keywords"] or "[]")),
                }
                for e in examples
            ]
            or copy.deepcopy(DEFAULT_KEYWORDS["example_questions"]),
        }

    @staticmethod
    def _default_keywords(args: dict[str, Any]) -> dict[str, Any]:
        return {"difficulty": args["difficulty"], "category": args["category"], **copy.deepcopy(DEFAULT_KEYWORDS)}

    # ---- tool 5 -----------------------------------------------------------------------------------------------

    async def save_generated_question(
        self,
        item_type: str,
        stem: str,
        choices: list[str] | None = None,
        correct_key: str | None = None,
        correct_keywords: list[str] | None = None,
        difficulty: int = 5,
        categories: list[str] | None = None,
        round_id: str = "",
        validation_score: float | None = None,
        explanation: str | None = None,
        *,
        topic: str = "",
        lang: str = "en",
    ) -> dict[str, Any]:
        """Tool 5: save a validated question (once: the same question again answers with the saved one). A database
        that refuses the save gets it later: the item is queued durably and the answer is `success=False,
        queued_for_retry=True`."""
        checked = _check_save(
            item_type,
            stem,
            choices,
            correct_key,
            correct_keywords,
            difficulty,
            ["general"] if categories is None else categories,
            round_id,
            validation_score,
            explanation,
        )
        lang = _lang(lang)
        if not isinstance(topic, str) or len(topic) > 100:
            raise InvalidArgument("topic", "topic must be a string of at most 100 characters")
        row = {
            **{k: v for k, v in checked.items()},
            "topic": topic.strip(),
            "lang": lang,
            "id": str(uuid.uuid4()),
            "content_hash": content_hash(
                item_type=checked["item_type"], stem=checked["stem"], choices=checked["choices"], lang=lang
            ),
            "created_at": utcnow(),
        }
        try:
            question_id, created = await self._insert(row=row)
        except Exception as error:  # noqa: BLE001 - any failure to reach the database queues the save
            self.queue.put(row["content_hash"], row)
            self.queue.run_drainer(self._drain_one)
            return {
                "question_id": None,
                "round_id": checked["round_id"],
                "saved_at": utcnow(),
                "success": False,
                "error": _describe(error),
                "queued_for_retry": True,
            }
        return self._saved_result(row, question_id, already_saved=not created)

    def _saved_result(self, row: dict[str, Any], question_id: str, *, already_saved: bool) -> dict[str, Any]:
        answer_schema: dict[str, Any] = (
            {"correct_keywords": row["correct_keywords"]}
            if row["item_type"] == "short_answer"
            else {"correct_key": row["correct_key"]}
        )
        if row["validation_score"] is not None:
            answer_schema["validation_score"] = row["validation_score"]
        if row["explanation"]:
            answer_schema["explanation"] = row["explanation"]
        return {
            "question_id": question_id,
            "round_id": row["round_id"],
            "saved_at": row["created_at"],
            "success": True,
            "already_saved": already_saved,
            "item_type": row["item_type"],
            "stem": row["stem"],
            "choices": row["choices"],
            "difficulty": row["difficulty"],
            "category": row["categories"][0],
            "answer_schema": answer_schema,
            "validation_score": row["validation_score"],
        }

    def _insert_row(self, row: dict[str, Any]) -> tuple[str, bool]:
        """Insert the question unless its content hash is there: (its id, whether this call created it)."""
        values = {
            **{
                k: row[k]
                for k in (
                    "id",
                    "item_type",
                    "stem",
                    "correct_key",
                    "difficulty",
                    "topic",
                    "lang",
                    "explanation",
                    "round_id",
                    "session_id",
                    "round_number",
                    "validation_score",
                    "content_hash",
                    "created_at",
                )
            },
            "choices": json.dumps(row["choices"], ensure_ascii=False) if row["choices"] else None,
            "correct_keywords": json.dumps(row["correct_keywords"], ensure_ascii=False)
            if row["correct_keywords"]
            else None,
            "categories": json.dumps(row["categories"]),
            "source": "generated",
        }
        self._ready()
        try:
            with self.engine.begin() as conn:
                existing = conn.execute(
                    select(questions.c.id).where(questions.c.content_hash == row["content_hash"])
                ).scalar()
                if existing is not None:
                    return existing, False
                conn.execute(questions.insert().values(**values))
            return row["id"], True
        except IntegrityError:  # saved meanwhile by another caller: the same question
            with self.engine.connect() as conn:
                existing = conn.execute(
                    select(questions.c.id).where(questions.c.content_hash == row["content_hash"])
                ).scalar()
            if existing is None:
                raise
            return existing, False

    async def _drain_one(self, row: dict[str, Any]) -> str | None:
        question_id, _ = await self._insert(row=row)
        return question_id

    async def drain_retry_queue(self) -> int:
        """Save what the retry queue holds (once each); the number still queued."""
        return (await self.queue.drain(self._drain_one)).pending

    def start_retry_drainer(self) -> None:
        """Keep draining in the background (backoff) while anything is queued: a task on the running loop, or
        outside one (a process starting up) a daemon thread with its own loop; nothing to do when it is empty."""
        if not len(self.queue) or self.queue.run_drainer(self._drain_one) is not None:
            return
        if self._drain_thread is not None and self._drain_thread.is_alive():
            return
        self._drain_thread = threading.Thread(
            target=lambda: asyncio.run(self.queue.drain_until_empty(self._drain_one)),
            name="quiz-retry-drainer",
            daemon=True,
        )
        self._drain_thread.start()

    # ---- tools 4 and 6: quiz-judge's functions, with the seed's policies ----------------------------------------

    async def validate_question_quality(
        self,
        stem: Any,
        question_type: Any,
        choices: Any = None,
        correct_answer: Any = None,
        batch: bool = False,
        *,
        lang: str | None = None,
    ) -> Any:
        """Tool 4: the model's semantic score and the rule checks (pass ≥ 0.85, revise 0.70-0.85, reject < 0.70)."""
        from ._validate import validate_question_quality

        def fallback(args: dict[str, Any]) -> Any:
            if batch and isinstance(stem, list):
                return [{**VALIDATION_FALLBACK, "_fallback": True} for _ in stem]
            return copy.deepcopy(VALIDATION_FALLBACK)

        bound = self.timeouts["validate_question_quality"]
        run = apply_policies(  # the judge spends the budget item by item; the time bound is the backstop
            _bound(validate_question_quality, judge=self.judge, budget=bound),
            [seed_fallback(fallback), Timeout(seconds=bound + _BACKSTOP)],
        )
        extra = {"lang": lang} if lang is not None else {}
        return await run(
            stem=stem, question_type=question_type, choices=choices, correct_answer=correct_answer, batch=batch, **extra
        )

    async def score_and_explain(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Tool 6 with quiz-judge's arguments (`_score.score_and_explain`: session_id, user_id, question_id,
        question_type, user_answer, correct_answer, correct_keywords, difficulty, category, and its keyword-only
        extras from the bank): MC / TF exact, short answers by the model with the keyword match; an explanation with
        references; the seed's fallback when the work fails, never for bad input."""
        from ._score import score_and_explain

        try:
            given = inspect.signature(score_and_explain).bind_partial(*args, **kwargs).arguments
        except TypeError as error:
            raise InvalidArgumentType("arguments", str(error)) from None

        def fallback(_: dict[str, Any]) -> dict[str, Any]:
            who = {k: given.get(k) for k in ("session_id", "user_id", "question_id")}
            return {**who, **copy.deepcopy(SCORE_FALLBACK), "graded_at": utcnow()}

        bound = self.timeouts["score_and_explain"]
        run = apply_policies(
            _bound(score_and_explain, judge=self.judge, budget=bound),
            [seed_fallback(fallback), Timeout(seconds=bound + _BACKSTOP)],
        )
        return await run(**given)

    # ---- as runtime tools -------------------------------------------------------------------------------------

    def tool_defs(self) -> tuple[ToolDef, ...]:
        """The six tools for an agent or an MCP client (seed names and inputs; bad input → `invalid_arguments`)."""
        return _tool_defs(self)


def _bound(fn: Callable[..., Any], **fixed: Any) -> Callable[..., Any]:
    """`fn` with keyword arguments fixed (async or sync alike, awaited by the policies)."""

    async def call(**kwargs: Any) -> Any:
        result = fn(**kwargs, **fixed)
        return await result if inspect.isawaitable(result) else result

    return call


def _describe(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return f"{type(error).__name__}: {text}"[:300]


# ---- the runtime tools --------------------------------------------------------------------------------------------

Difficulty = Annotated[int, Field(ge=1, le=10)]
CategoryName = Literal["technical", "business", "general"]
QuestionType = Literal["multiple_choice", "true_false", "short_answer"]
Lang = Literal["en", "zh-CN"]


def invalid(error: ValueError | TypeError, fn: Callable[..., Any]) -> Exception:
    """A seed validation error (one naming an argument of `fn`) as the structured `invalid_arguments` error naming
    its field; any other ValueError / TypeError is a fault of the tool and stays one (the runtime's `tool_exception`)."""
    name = getattr(error, "field", None) or _field_of(str(error))
    if name is None or name not in inspect.signature(fn).parameters:
        return error
    return ToolError("invalid_arguments", str(error), field=name, hint=f"Fix {name} and call the tool again.")


def _field_of(message: str) -> str | None:
    first = message.split(" ", 1)[0].strip(":,.'\"")
    return first if first.isidentifier() else None


def _tool_defs(tools: QuizTools) -> tuple[ToolDef, ...]:
    async def get_user_profile(user_id: Annotated[str, Field(min_length=36, max_length=36)]) -> dict[str, Any]:
        """Get the user's self-assessment profile: self_level, years_experience, job_role, duty, interests, previous_score.

        Args:
            user_id: The user's id, a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx).
        """
        try:
            return await tools.get_user_profile(user_id)
        except (ValueError, TypeError) as error:
            raise invalid(error, get_user_profile) from None

    async def search_question_templates(
        interests: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=50)]], Field(min_length=1, max_length=10)
        ],
        difficulty: Difficulty,
        category: CategoryName,
        lang: Lang | None = None,
        limit: Annotated[int, Field(ge=1, le=MAX_TEMPLATES)] = MAX_TEMPLATES,
    ) -> list[dict[str, Any]]:
        """Search question templates (few-shot examples) of a category within ±1.5 of a difficulty, matching interests.

        Args:
            interests: Topics of interest, 1-10 items of 1-50 characters (e.g. SQL, budgeting).
            difficulty: Difficulty 1-10.
            category: technical, business or general.
            lang: Only templates in this language (en or zh-CN); all languages when left out.
            limit: At most this many templates (1-10, default 10).
        """
        try:
            return await tools.search_question_templates(interests, difficulty, category, lang, limit)
        except (ValueError, TypeError) as error:
            raise invalid(error, search_question_templates) from None

    async def get_difficulty_keywords(
        difficulty: Difficulty, category: CategoryName, lang: Lang = "en"
    ) -> dict[str, Any]:
        """Get the keywords, concepts (name, acronym, definition, key_points) and example questions of a difficulty.

        Args:
            difficulty: Difficulty 1-10.
            category: technical, business or general.
            lang: en or zh-CN.
        """
        try:
            return await tools.get_difficulty_keywords(difficulty, category, lang)
        except (ValueError, TypeError) as error:
            raise invalid(error, get_difficulty_keywords) from None

    async def validate_question_quality(
        stem: Annotated[str, Field(min_length=1, max_length=250)]
        | list[Annotated[str, Field(min_length=1, max_length=250)]],
        question_type: QuestionType | list[QuestionType],
        choices: list[str] | list[list[str] | None] | None = None,
        correct_answer: str | list[str] | None = None,
        batch: bool = False,
    ) -> Any:
        """Validate a generated question's quality: the model's semantic score and rule checks; pass ≥ 0.85, revise 0.70-0.85, reject < 0.70.

        Args:
            stem: The question's text, 1-250 characters (a list of them with batch=true).
            question_type: multiple_choice, true_false or short_answer (a list with batch=true).
            choices: The choices of a multiple-choice question, 4-5 (a list of lists with batch=true).
            correct_answer: The correct answer, required for multiple_choice and true_false.
            batch: Validate several questions at once (each judged on its own).
        """
        try:
            return await tools.validate_question_quality(stem, question_type, choices, correct_answer, batch)
        except (ValueError, TypeError) as error:
            raise invalid(error, validate_question_quality) from None

    async def save_generated_question(
        item_type: QuestionType,
        stem: Annotated[str, Field(min_length=1, max_length=2000)],
        round_id: Annotated[str, Field(min_length=5, max_length=200)],
        choices: Annotated[list[str], Field(min_length=4, max_length=5)] | None = None,
        correct_key: str | None = None,
        correct_keywords: list[str] | None = None,
        difficulty: Difficulty = 5,
        categories: Annotated[list[CategoryName], Field(min_length=1, max_length=3)] | None = None,
        validation_score: Annotated[float, Field(ge=0.0, le=1.0)] | None = None,
        explanation: str | None = None,
        topic: Annotated[str, Field(max_length=100)] = "",
        lang: Lang = "en",
    ) -> dict[str, Any]:
        """Save a validated question to the question bank (once; a refused save is queued durably and retried).

        Args:
            item_type: multiple_choice, true_false or short_answer.
            stem: The question's text, 1-2000 characters.
            round_id: session_id_round_number_timestamp, e.g. sess_42_1_2025-11-06T10:30:00Z.
            choices: The choices (multiple_choice: 4-5).
            correct_key: The correct choice (multiple_choice: one of the choices; true_false: True or False).
            correct_keywords: The keywords a short answer must contain (short_answer).
            difficulty: Difficulty 1-10.
            categories: technical, business or general (default general).
            validation_score: Tool 4's final score, 0.0-1.0.
            explanation: Why the answer is right.
            topic: The question's topic (e.g. SQL joins).
            lang: The question's language, en or zh-CN.
        """
        try:
            return await tools.save_generated_question(
                item_type,
                stem,
                choices,
                correct_key,
                correct_keywords,
                difficulty,
                categories,
                round_id,
                validation_score,
                explanation,
                topic=topic,
                lang=lang,
            )
        except (ValueError, TypeError) as error:
            raise invalid(error, save_generated_question) from None

    async def score_and_explain(
        session_id: Annotated[str, Field(min_length=1, max_length=200)],
        user_id: Annotated[str, Field(min_length=1, max_length=64)],
        question_id: Annotated[str, Field(min_length=1, max_length=64)],
        question_type: QuestionType,
        user_answer: Annotated[str, Field(min_length=1, max_length=4000)],
        correct_answer: str | None = None,
        correct_keywords: list[str] | None = None,
        difficulty: Difficulty | None = None,
        category: CategoryName | None = None,
        stem: Annotated[str, Field(min_length=1, max_length=2000)] | None = None,
    ) -> dict[str, Any]:
        """Score an answer and explain it: multiple choice and true/false exactly (0 or 100), short answers 0-100 with the keywords matched.

        Args:
            session_id: The test session.
            user_id: The user who answered.
            question_id: The question answered.
            question_type: multiple_choice, true_false or short_answer.
            user_answer: The user's answer.
            correct_answer: The correct answer (multiple_choice and true_false); for short_answer, a reference answer.
            correct_keywords: The keywords a good short answer contains (short_answer).
            difficulty: The question's difficulty 1-10.
            category: technical, business or general.
            stem: The question's text (a short answer is graded against it; without it, against the keywords only).
        """
        try:
            return await tools.score_and_explain(
                session_id,
                user_id,
                question_id,
                question_type,
                user_answer,
                correct_answer,
                correct_keywords,
                difficulty,
                category,
                stem=stem,
            )
        except (ValueError, TypeError) as error:
            raise invalid(error, score_and_explain) from None

    functions = (
        get_user_profile,
        search_question_templates,
        get_difficulty_keywords,
        validate_question_quality,
        save_generated_question,
        score_and_explain,
    )
    return tuple(
        ToolDef(name=f.__name__, function=f, description=(f.__doc__ or "").split("\n\n")[0].strip()) for f in functions
    )
