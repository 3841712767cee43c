"""A person's adaptive test, durable in the store: the profile they gave, the items shown in order, each answer with
its score and correctness, and the ability estimate (θ, its SE) after each one.

The states: a session starts with its first item shown (`in_progress`, item 1); an answer to the item shown is
scored, recorded and followed, in ONE transaction, by the next item shown (or the end: `finished`, with the stop
reason). So a process killed at any instant leaves the answer either recorded with its successor chosen, or not
recorded at all (the person answers again); it is never half-written and never counted twice:

- an answer to item k of session s that was recorded already is not counted again (the same answer gives back the
  recorded result, `repeated=True`; a different one is `already_answered`);
- an answer to an item that is not the one shown is `not_current_item`, and changes nothing.

Items come from the quiz bank (`_db.questions`) in the session's language, each with its 2PL parameters
(`_db.item_params`, or provisional ones from its 1-10 level); the next item is chosen by `_cat.next_item` (maximum
information, randomesque exposure control, content balance) at the current EAP estimate (`_irt.eap`, the prior's
mean set by the person's self-assessed level), until `_cat.stop_reason` (SE target or maximum length) or the bank
runs out. Multiple-choice and true/false answers are scored in code (exact, case-insensitive); short answers by a
`ShortAnswerScorer` (the model, through seed tool 6 `score_and_explain`, with the seed's fallback). Every scored
answer is also a row of `_db.responses` (what items are recalibrated from), in the same transaction.

The sessions' own tables (`quiz_test_sessions`, `quiz_test_items`) are quiz's (`_db`), migrated with the store. A session belongs to the principal that started it (a web session, the terminal's `local`): another
principal's session is `not_found`, exactly like an unknown one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import secrets
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from html import escape
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator
from pydantic_core import PydanticCustomError
from sqlalchemy import func, select, update
from sqlalchemy.engine import Connection, Engine

from ...i18n import catalog, normalize_lang, t
from ...runtime import ConflictError, ConsultaError, InvalidAnswerError, NotFoundError, upsert, writing
from . import _db
from ._cat import Bank, CatRules, next_item, stop_reason
from ._db import metadata, test_items, test_sessions
from ._grading import FALLBACK, Scored, ShortAnswer, ShortAnswerScorer, model_short_answers, score_exact, truth
from ._irt import eap, level_to_b, provisional_params
from ._profiles import SELF_LEVELS, level_difficulty

__all__ = [
    "AnswerResult",
    "Feedback",
    "ItemView",
    "Point",
    "ProfileForm",
    "Reviewed",
    "Scored",
    "SessionView",
    "ShortAnswer",
    "ShortAnswerScorer",
    "TestSessionError",
    "TestSessions",
    "ability_svg",
    "app_sessions",
    "metadata",
    "model_short_answers",
    "parse_profile",
    "prior_mean",
    "answered_in_open_test",
    "recalibrate_items",
    "truth",
    "user_id_of",
]

log = logging.getLogger("consulta.quiz")

PRIOR_SD = 1.0
_USERS = uuid.UUID("6f1d3c3e-2a51-4f5e-9a53-8c1b0f7f2d11")
"""The namespace of the profile ids made from principals (`user_id_of`)."""

# ---- tables -----------------------------------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


# ---- errors -----------------------------------------------------------------------------------------------------


class TestSessionError(ConsultaError):
    """A request about a test that cannot be carried out; nothing was changed. `code` names it (the message key is
    `quiz.take.error.<code>`); `status` is its HTTP status; `field` the input at fault, if one is."""

    __test__ = False  # not a pytest class
    status = 400

    def __init__(self, code: str, message: str, *, field: str | None = None, **values: Any) -> None:
        super().__init__(message)
        self.code = code
        self.field = field
        self.values = values

    def localized(self, lang: str) -> str:
        key = f"quiz.take.error.{self.code}"
        if key not in catalog(normalize_lang(lang)):
            return str(self)
        return t(key, lang, **{k: _localized_value(v, lang) for k, v in self.values.items()})


def _localized_value(value: Any, lang: str) -> Any:
    return value.localized(lang) if isinstance(value, _Words) else value


@dataclass(frozen=True)
class _Words:
    """A value of an error message that has words of its own (`quiz.take.<key>` formatted with `values`)."""

    key: str
    values: Mapping[str, Any]

    def localized(self, lang: str) -> str:
        return t(f"quiz.take.{self.key}", lang, **self.values)


class _NotFound(TestSessionError, NotFoundError):
    status = 404


class _Conflict(TestSessionError, ConflictError):
    status = 409


class _Invalid(TestSessionError, InvalidAnswerError):
    status = 422


def _unknown_session(session_id: str) -> TestSessionError:
    return _NotFound(
        "unknown_test",
        f"No test {session_id!r} of yours: start a test, or open the one you are taking.",
        session=session_id,
    )


# ---- the profile --------------------------------------------------------------------------------------------------

_NOT_BLANK = r"[^\s\x1c-\x1f]"  # a character str.strip() keeps (it strips \x1c-\x1f, which the schema's \S would allow)
"""Some text besides spaces (a JSON schema `pattern`, so the API's docs say it too)."""
Interest = Annotated[str, StringConstraints(min_length=1, max_length=50, pattern=_NOT_BLANK)]


class ProfileForm(BaseModel):
    """The profile a person gives to start a test: the seed's fields (tool 1) — their own level, years of
    experience, job role, duty and interests — each required and within the seed's bounds (stored in
    `quiz_profiles`, read by tool 1 as `_profiles.Profile`). Text is kept without its surrounding spaces."""

    model_config = ConfigDict(extra="forbid", strict=True)  # "3" is not a number of years

    self_level: Literal["beginner", "intermediate", "advanced", "expert"]
    years_experience: int = Field(ge=0, le=60)
    job_role: str = Field(min_length=1, max_length=100, pattern=_NOT_BLANK)
    duty: str = Field(min_length=1, max_length=500, pattern=_NOT_BLANK)
    interests: list[Interest] = Field(min_length=1, max_length=10)

    @field_validator("job_role", "duty")
    @classmethod
    def _trimmed(cls, text: str) -> str:
        return _not_blank(text)

    @field_validator("interests")
    @classmethod
    def _each_trimmed(cls, interests: list[str]) -> list[str]:
        return [_not_blank(text) for text in interests]


def _not_blank(text: str) -> str:
    """`text` without its surrounding spaces; a text that is nothing else is too short (a stored profile must read back)."""
    trimmed = text.strip()
    if not trimmed:
        raise PydanticCustomError("string_too_short", "String should have at least 1 character that is not a space")
    return trimmed


_PROFILE_PROBLEMS = {
    "missing": "missing",
    "string_too_short": "empty",
    "string_pattern_mismatch": "empty",
    "too_short": "empty",
    "string_too_long": "too_long",
    "too_long": "too_many",
    "greater_than_equal": "range",
    "less_than_equal": "range",
    "int_parsing": "number",
    "int_type": "number",
    "int_from_float": "number",
    "string_type": "text",
    "list_type": "list",
    "literal_error": "level",
    "extra_forbidden": "unknown",
}
_LIMITS = {"job_role": 100, "duty": 500, "interests": 10, "years_experience": 60}


def parse_profile(values: Any) -> ProfileForm:
    """`values` as a ProfileForm, or `invalid_profile` naming the first field at fault and why, in the reader's words."""
    try:
        return ProfileForm.model_validate(values)
    except ValidationError as error:
        first = error.errors()[0]
        loc = [str(x) for x in first.get("loc", ())]
        field = loc[0] if loc else "profile"
        kind = _PROFILE_PROBLEMS.get(str(first.get("type")), "invalid")
        if field == "interests" and len(loc) > 1 and kind in ("empty", "too_long"):
            kind = "interest_" + kind
        limit = 50 if kind.startswith("interest_") else _LIMITS.get(field, 0)
        why = _Words(f"profile.bad.{kind}", {"limit": limit, "levels": " / ".join(SELF_LEVELS)})
        raise _Invalid(
            "invalid_profile",
            f"The profile's {field} is not valid: {first.get('msg')}.",
            field=".".join(["profile", *loc]),
            name=_Words(
                f"profile.{field}" if field in ProfileForm.model_fields else "profile.unknown_field", {"field": field}
            ),
            why=why,
        ) from None


def prior_mean(self_level: str) -> float:
    """The prior's mean of θ for a person's own level: the b of the difficulty that level starts at (tool 1's
    `level_difficulty`), so the first item is near what they say they can do."""
    return level_to_b(level_difficulty(self_level))


def user_id_of(principal: str) -> str:
    """The profile id (a UUID, seed tool 1) of a principal: the same person, the same profile."""
    return str(uuid.uuid5(_USERS, principal))


# ---- what front ends show ---------------------------------------------------------------------------------------


class ItemView(BaseModel):
    """An item as the person sees it: never its key."""

    position: int
    question_id: str
    item_type: Literal["multiple_choice", "true_false", "short_answer"]
    stem: str
    choices: list[str] | None = None
    category: str
    topic: str = ""
    difficulty: int


class Feedback(BaseModel):
    """What an answer earned: its score (0-100) and correctness, the right answer, the item's explanation (and the
    short-answer grader's own words), and the estimate after it."""

    position: int
    question_id: str
    answer: str
    score: float
    is_correct: bool
    correct_answer: str | None = None
    correct_keywords: list[str] | None = None
    explanation: str | None = None
    grader_explanation: str | None = None
    grader_feedback: str | None = None
    graded_by: Literal["code", "model", "fallback"]
    theta: float
    se: float


class Point(BaseModel):
    """The estimate after `position` answers (0: the prior, before any)."""

    position: int
    theta: float
    se: float
    is_correct: bool | None = None


class Reviewed(BaseModel):
    item: ItemView
    feedback: Feedback


class SessionView(BaseModel):
    """A test as its person sees it. In progress: `item` is the one to answer now (item `item.position` of at most
    `max_items`). Finished: the stop reason, the estimate with its SE, and `review`, every item with its feedback."""

    id: str
    status: Literal["in_progress", "finished", "abandoned"]
    lang: str
    profile: ProfileForm
    answered: int
    min_items: int
    max_items: int
    se_target: float
    theta: float
    se: float
    item: ItemView | None = None
    last: Feedback | None = None
    stop_reason: Literal["se_target", "max_items", "bank_exhausted"] | None = None
    trajectory: list[Point]
    review: list[Reviewed] | None = None
    started_at: str
    finished_at: str | None = None


class AnswerResult(BaseModel):
    """The answer's feedback and the test after it. `repeated`: this answer had been recorded already (a retry):
    nothing was counted again."""

    feedback: Feedback
    session: SessionView
    repeated: bool = False


# ---- scoring ----------------------------------------------------------------------------------------------------


def recalibrate_items(engine: Engine) -> None:
    """Recalibrate the items from the responses recorded (quiz-irt's `recalibrate`): run after a test ends."""
    from ._calibration import recalibrate

    recalibrate(engine)


# ---- the bank as the test sees it -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Item:
    id: str
    item_type: str
    stem: str
    choices: list[str] | None
    key: str | None
    keywords: list[str] | None
    difficulty: int
    category: str
    topic: str
    explanation: str | None

    def view(self, position: int) -> ItemView:
        return ItemView(
            position=position,
            question_id=self.id,
            item_type=self.item_type,
            stem=self.stem,  # type: ignore[arg-type]
            choices=self.choices,
            category=self.category,
            topic=self.topic,
            difficulty=self.difficulty,
        )


def _item(row: Mapping[str, Any]) -> _Item:
    categories = json.loads(row["categories"] or "[]") or ["general"]
    return _Item(
        id=row["id"],
        item_type=row["item_type"],
        stem=row["stem"],
        choices=json.loads(row["choices"]) if row["choices"] else None,
        key=row["correct_key"],
        keywords=json.loads(row["correct_keywords"]) if row["correct_keywords"] else None,
        difficulty=int(row["difficulty"]),
        category=str(categories[0]),
        topic=row["topic"] or "",
        explanation=row["explanation"],
    )


@dataclass(frozen=True)
class _Pool:
    """The items of one language, in a fixed order, with their parameters: what `next_item` chooses among."""

    items: list[_Item]
    bank: Bank
    index: dict[str, int]

    @classmethod
    def read(cls, conn: Connection, lang: str, *, started_at: str | None = None) -> _Pool:
        """The pool of a test in `lang`; of one that started at `started_at`, without the items generated since (a
        person who has questions generated during their test has read those items' keys)."""
        q, p = _db.questions, _db.item_params
        known = q.c.lang == lang
        if started_at is not None:
            known = known & ((q.c.source == "bank") | (q.c.created_at <= started_at))
        rows = (
            conn.execute(
                select(q, p.c.a, p.c.b)
                .select_from(q.outerjoin(p, p.c.question_id == q.c.id))
                .where(known)
                .order_by(q.c.id)
            )
            .mappings()
            .all()
        )
        items, a, b = [], [], []
        for row in rows:
            items.append(_item(row))
            params = provisional_params(int(row["difficulty"])) if row["a"] is None else None
            a.append(params.a if params else float(row["a"]))
            b.append(params.b if params else float(row["b"]))
        bank = Bank(
            ids=tuple(i.id for i in items),
            a=np.asarray(a, dtype=float),
            b=np.asarray(b, dtype=float),
            categories=tuple(i.category for i in items),
        )
        return cls(items=items, bank=bank, index={i.id: n for n, i in enumerate(items)})


# ---- the sessions -------------------------------------------------------------------------------------------------


class TestSessions:
    """People's adaptive tests on `engine` (the store's). `rules`: how tests choose and stop (kept per session);
    `short_answers`: the grader of short answers (None: the seed's fallback for each); `prepare_bank(engine)`: called
    once before the first test, to load the shipped bank; `recalibrate(engine)`: run in the background after a test
    ends (one at a time; `settle` waits for it, bounded). Thread-safe; every write is one transaction."""

    __test__ = False

    def __init__(
        self,
        engine: Engine,
        *,
        rules: CatRules | None = None,
        short_answers: ShortAnswerScorer | None = None,
        prepare_bank: Callable[[Engine], None] | None = None,
        recalibrate: Callable[[Engine], Any] | None = None,
    ) -> None:
        self.engine = engine
        self.rules = rules or CatRules()
        self.short_answers = short_answers
        self._prepare_bank = prepare_bank
        self._recalibrate = recalibrate
        self._calibrating: asyncio.Task[None] | None = None
        self._again = False
        self._ready = False
        self._readying = threading.Lock()

    # ---- set-up ----

    def _ensure(self) -> None:
        if self._ready:
            return
        with self._readying:  # once, though requests come on several threads
            if not self._ready:
                _db.create_tables(self.engine)
                if self._prepare_bank is not None:
                    self._prepare_bank(self.engine)
                self._ready = True

    def _writing(self) -> AbstractContextManager[Connection]:
        """One transaction holding the write lock from its start (the store's `writing`): what it reads is what it
        writes over; PostgreSQL rows are locked with FOR UPDATE where read."""
        return writing(self.engine)

    # ---- profiles ----

    def saved_profile(self, principal: str) -> ProfileForm | None:
        """The profile this principal saved last, if any."""
        self._ensure()
        p = _db.profiles
        with self.engine.connect() as conn:
            row = conn.execute(select(p).where(p.c.user_id == user_id_of(principal))).mappings().first()
        if row is None:
            return None
        try:
            return ProfileForm(
                self_level=row["self_level"],
                years_experience=row["years_experience"],
                job_role=row["job_role"],
                duty=row["duty"],
                interests=json.loads(row["interests"]),
            )
        except (ValidationError, ValueError):  # a profile saved by another part, outside this form's bounds
            return None

    def _save_profile(self, conn: Connection, user_id: str, profile: ProfileForm, lang: str) -> None:
        p = _db.profiles
        values = {**profile.model_dump(), "interests": json.dumps(profile.interests, ensure_ascii=False)}
        statement = upsert(conn, p, key=["user_id"], set_=[*values, "lang", "updated_at"])
        conn.execute(statement.values(user_id=user_id, lang=lang, updated_at=_now(), previous_score=0.0, **values))

    # ---- starting ----

    def start(self, principal: str, profile: Any, *, lang: str, replace_open: bool = False) -> SessionView:
        """A new test for `principal` with `profile` (validated: `invalid_profile`), in `lang`, its first item shown;
        the profile is saved as theirs. A test of theirs still in progress is `test_in_progress` unless
        `replace_open` (it is then abandoned, its answers kept). `no_items`: the bank has no items in `lang`."""
        checked = parse_profile(profile)
        lang = normalize_lang(lang)
        self._ensure()
        session_id = secrets.token_hex(12)  # 24 characters: the responses key `<session>:<question>` fits its 64
        user_id = user_id_of(principal)
        prior = prior_mean(checked.self_level)
        now = _now()
        with self._writing() as conn:
            open_id = self._open_id(conn, principal)
            if open_id is not None:
                if not replace_open:
                    raise _Conflict(
                        "test_in_progress", "A test of yours is in progress: finish it, or start over.", session=open_id
                    )
                conn.execute(
                    update(test_sessions)
                    .where(test_sessions.c.id == open_id)
                    .values(status="abandoned", updated_at=now)
                )
            pool = _Pool.read(conn, lang)
            if not pool.items:
                raise _Conflict(
                    "no_items", f"The question bank has no items in {lang} yet.", language=_Words(f"lang.{lang}", {})
                )
            seed = secrets.randbits(31)
            first = next_item(pool.bank, theta=prior, administered=[], rules=self.rules, rng=_rng(seed, 1))
            if first is None:  # pragma: no cover - a non-empty bank always has a first item
                raise _Conflict(
                    "no_items", f"The question bank has no items in {lang} yet.", language=_Words(f"lang.{lang}", {})
                )
            self._save_profile(conn, user_id, checked, lang)
            conn.execute(
                test_sessions.insert().values(
                    id=session_id,
                    principal=principal,
                    user_id=user_id,
                    lang=lang,
                    profile=checked.model_dump_json(),
                    status="in_progress",
                    position=1,
                    theta=prior,
                    se=PRIOR_SD,
                    prior_mean=prior,
                    rules=json.dumps(asdict(self.rules)),
                    seed=seed,
                    created_at=now,
                    updated_at=now,
                )
            )
            self._show(conn, session_id, 1, pool, first)
        return self.view(principal, session_id)

    @staticmethod
    def _open_id(conn: Connection, principal: str) -> str | None:
        s = test_sessions
        return conn.execute(
            select(s.c.id)
            .where(s.c.principal == principal, s.c.status == "in_progress")
            .order_by(s.c.created_at.desc())
            .limit(1)
        ).scalar()

    @staticmethod
    def _show(conn: Connection, session_id: str, position: int, pool: _Pool, index: int) -> None:
        conn.execute(
            test_items.insert().values(
                session_id=session_id,
                position=position,
                question_id=pool.items[index].id,
                a=float(pool.bank.a[index]),
                b=float(pool.bank.b[index]),
                shown_at=_now(),
            )
        )

    # ---- reading ----

    def open_test(self, principal: str) -> SessionView | None:
        """The principal's test in progress (the newest), if any: where they come back to."""
        self._ensure()
        with self.engine.connect() as conn:
            session_id = self._open_id(conn, principal)
        return self.view(principal, session_id) if session_id else None

    def view(self, principal: str, session_id: str) -> SessionView:
        """Test `session_id` of `principal` (`unknown_test` for another principal's or an unknown one)."""
        self._ensure()
        with self.engine.connect() as conn:
            session = self._session(conn, principal, session_id)
            rows = self._items(conn, session_id)
            questions = _questions(conn, [r["question_id"] for r in rows])
        return _view(session, rows, questions)

    @staticmethod
    def _session(conn: Connection, principal: str, session_id: str, *, lock: bool = False) -> Mapping[str, Any]:
        statement = select(test_sessions).where(
            test_sessions.c.id == session_id, test_sessions.c.principal == principal
        )
        if lock and conn.dialect.name != "sqlite":
            statement = statement.with_for_update()
        row = conn.execute(statement).mappings().first()
        if row is None:
            raise _unknown_session(session_id)
        return row

    @staticmethod
    def _items(conn: Connection, session_id: str) -> list[Mapping[str, Any]]:
        return list(
            conn.execute(
                select(test_items).where(test_items.c.session_id == session_id).order_by(test_items.c.position)
            ).mappings()
        )

    # ---- answering ----

    async def answer(
        self, principal: str, session_id: str, *, position: int, question_id: str, answer: str
    ) -> AnswerResult:
        """Answer item `position` (question `question_id`) of test `session_id`. Scored (short answers by the grader,
        outside any transaction), then recorded with the next item chosen in one transaction. Errors, nothing
        changed: `unknown_test`, `test_finished`, `not_current_item`, `already_answered` (a different answer to an
        item answered before; the same answer again gives the recorded result back, `repeated`), `empty_answer`,
        `answer_too_long`, `not_a_choice`."""
        session, item, text = await asyncio.to_thread(
            self._check, principal, session_id, position, question_id, answer.strip() if isinstance(answer, str) else ""
        )
        if text is None:  # answered already, with this answer
            return await asyncio.to_thread(self._result, principal, session_id, position, repeated=True)
        if item.item_type == "short_answer":
            scored = FALLBACK
            if self.short_answers is not None:
                scored = await self.short_answers(
                    ShortAnswer(
                        session_id=session_id,
                        user_id=session["user_id"],
                        question_id=item.id,
                        answer=text,
                        keywords=item.keywords or [],
                        difficulty=item.difficulty,
                        category=item.category,
                        lang=session["lang"],
                        stem=item.stem,
                        topic=item.topic,
                        explanation=item.explanation,
                    )
                )
        else:
            scored = score_exact(item.item_type, item.key, text)
        result = await asyncio.to_thread(self._record, principal, session_id, position, question_id, text, scored)
        if result.session.status == "finished" and not result.repeated:
            self._calibrate_soon()
        return result

    def _calibrate_soon(self) -> None:
        """Recalibrate in the background: now, or once more after the one running (its data may predate this test)."""
        if self._recalibrate is None:
            return
        if self._calibrating is not None and not self._calibrating.done():
            self._again = True
            return
        self._calibrating = asyncio.get_running_loop().create_task(self._calibrate())

    async def _calibrate(self) -> None:
        assert self._recalibrate is not None
        while True:
            self._again = False
            try:
                await asyncio.to_thread(self._recalibrate, self.engine)
            except Exception:  # noqa: BLE001 - the test is recorded; calibration tries again after the next one
                log.exception("Recalibrating the quiz items failed.")
            if not self._again:
                return

    async def settle(self, *, timeout_s: float = 30.0) -> bool:
        """Wait (at most `timeout_s`) for a recalibration under way; True when none is left running."""
        task = self._calibrating
        if task is None or task.done():
            return True
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
        return bool(done)

    def _check(
        self, principal: str, session_id: str, position: int, question_id: str, text: str
    ) -> tuple[Mapping[str, Any], _Item, str | None]:
        """The session, the item the answer is for and the answer as recorded (a choice as the item writes it, true or
        false), if it may be recorded; None for the answer when this very answer is recorded already."""
        self._ensure()
        if not text:
            raise _Invalid("empty_answer", "The answer is empty: write or choose one.", field="answer")
        if len(text) > 2000:
            raise _Invalid("answer_too_long", "The answer is over 2000 characters.", field="answer", limit=2000)
        with self.engine.connect() as conn:
            session = self._session(conn, principal, session_id)
            row = (
                conn.execute(
                    select(test_items).where(test_items.c.session_id == session_id, test_items.c.position == position)
                )
                .mappings()
                .first()
            )
            answered = row is not None and row["answer"] is not None and row["question_id"] == question_id
            if not answered:
                self._must_be_current(session, row, position, question_id)
            item = _questions(conn, [question_id])[question_id]
        given = _as_recorded(item, text)
        if answered:
            if row is not None and row["answer"] == given:
                return session, item, None
            raise _Conflict(
                "already_answered",
                f"Item {position} was answered already; an answer counts once.",
                field="answer",
                position=position,
            )
        return session, item, given

    @staticmethod
    def _must_be_current(
        session: Mapping[str, Any], row: Mapping[str, Any] | None, position: int, question_id: str
    ) -> None:
        if session["status"] != "in_progress":
            raise _Conflict("test_finished", "This test is over: no more answers are taken.", session=session["id"])
        if (
            row is None
            or position != session["position"]
            or row["question_id"] != question_id
            or row["answer"] is not None
        ):
            raise _Conflict(
                "not_current_item",
                f"The item answered is not the one shown: item {session['position']} is.",
                field="position",
                position=session["position"],
            )

    def _result(self, principal: str, session_id: str, position: int, *, repeated: bool) -> AnswerResult:
        """The recorded answer to item `position` and the test after it."""
        view = self.view(principal, session_id)
        with self.engine.connect() as conn:
            row = (
                conn.execute(
                    select(test_items).where(test_items.c.session_id == session_id, test_items.c.position == position)
                )
                .mappings()
                .one()
            )
            question = _questions(conn, [row["question_id"]])[row["question_id"]]
        return AnswerResult(feedback=_feedback(row, question), session=view, repeated=repeated)

    def _record(
        self, principal: str, session_id: str, position: int, question_id: str, text: str, scored: Scored
    ) -> AnswerResult:
        """The answer, its response row, the new estimate and the next item (or the end), in one transaction."""
        with self._writing() as conn:
            session = self._session(conn, principal, session_id, lock=True)
            rows = self._items(conn, session_id)
            row = next((r for r in rows if r["position"] == position), None)
            if row is not None and row["answer"] is not None and row["question_id"] == question_id:
                if row["answer"] != text:  # another request answered it while this one was being scored
                    raise _Conflict(
                        "already_answered",
                        f"Item {position} was answered already; an answer counts once.",
                        field="answer",
                        position=position,
                    )
                repeated = True
            else:
                self._must_be_current(session, row, position, question_id)
                repeated = False
                self._write_answer(conn, session, rows, position, question_id, text, scored)
        return self._result(principal, session_id, position, repeated=repeated)

    def _write_answer(
        self,
        conn: Connection,
        session: Mapping[str, Any],
        rows: list[Mapping[str, Any]],
        position: int,
        question_id: str,
        text: str,
        scored: Scored,
    ) -> None:
        session_id, now = session["id"], _now()
        answered = [r for r in rows if r["answer"] is not None and r["position"] != position]
        a = [r["a"] for r in answered] + [next(r["a"] for r in rows if r["position"] == position)]
        b = [r["b"] for r in answered] + [next(r["b"] for r in rows if r["position"] == position)]
        u = [r["is_correct"] for r in answered] + [1 if scored.is_correct else 0]
        estimate = eap(
            np.asarray(a, float),
            np.asarray(b, float),
            np.asarray(u, float),
            prior_mean=session["prior_mean"],
            prior_sd=PRIOR_SD,
        )
        theta, se = float(estimate.theta), float(estimate.se)
        grader = json.dumps({"explanation": scored.explanation, "feedback": scored.feedback}, ensure_ascii=False)
        changed = conn.execute(
            update(test_items)
            .where(
                test_items.c.session_id == session_id, test_items.c.position == position, test_items.c.answer.is_(None)
            )
            .values(
                answer=text,
                score=scored.score,
                is_correct=int(scored.is_correct),
                graded_by=scored.graded_by,
                grader=grader,
                theta=theta,
                se=se,
                answered_at=now,
            )
        ).rowcount
        if changed != 1:  # pragma: no cover - the write lock makes this impossible; never count an answer twice
            raise _Conflict(
                "already_answered",
                f"Item {position} was answered already; an answer counts once.",
                field="answer",
                position=position,
            )
        r = _db.responses
        response_id = f"{session_id}:{question_id}"
        if conn.execute(select(func.count()).select_from(r).where(r.c.id == response_id)).scalar() == 0:
            conn.execute(
                r.insert().values(
                    id=response_id,
                    user_id=session["user_id"],
                    session_id=session_id,
                    question_id=question_id,
                    user_answer=text,
                    score=scored.score,
                    is_correct=int(scored.is_correct),
                    created_at=now,
                )
            )
        rules = CatRules(**json.loads(session["rules"]))
        reason: str | None = stop_reason(se=se, n=len(u), rules=rules)
        chosen: int | None = None
        if reason is None:
            pool = _Pool.read(conn, session["lang"], started_at=session["created_at"])
            given = [pool.index[r["question_id"]] for r in rows if r["question_id"] in pool.index]
            chosen = next_item(
                pool.bank, theta=theta, administered=given, rules=rules, rng=_rng(session["seed"], position + 1)
            )
            if chosen is None:
                reason = "bank_exhausted"
            else:
                self._show(conn, session_id, position + 1, pool, chosen)
        values: dict[str, Any] = {"theta": theta, "se": se, "updated_at": now}
        if reason is None:
            values["position"] = position + 1
        else:
            values.update(status="finished", stop_reason=reason, finished_at=now)
            correct = sum(u) / len(u) * 100.0
            conn.execute(
                update(_db.profiles)
                .where(_db.profiles.c.user_id == session["user_id"])
                .values(previous_score=round(correct, 1))
            )
        guard = (
            test_sessions.c.id == session_id,
            test_sessions.c.status == "in_progress",
            test_sessions.c.position == position,
        )
        if (
            conn.execute(update(test_sessions).where(*guard).values(**values)).rowcount != 1
        ):  # pragma: no cover - see above
            raise _Conflict(
                "not_current_item", "The item answered is not the one shown.", field="position", position=position
            )

    def abandon(self, principal: str, session_id: str) -> SessionView:
        """Give test `session_id` up (its answers are kept); a test that is over stays as it is."""
        self._ensure()
        with self._writing() as conn:
            session = self._session(conn, principal, session_id, lock=True)
            if session["status"] == "in_progress":
                conn.execute(
                    update(test_sessions)
                    .where(test_sessions.c.id == session_id)
                    .values(status="abandoned", updated_at=_now())
                )
        return self.view(principal, session_id)


def _as_recorded(item: _Item, text: str) -> str:
    """An answer as it is recorded: a multiple-choice answer as the item writes the choice, a true/false one as
    `true` or `false` (`not_a_choice` for an answer that is neither), a short answer as given."""
    if item.item_type == "true_false":
        value = truth(text)
        if value is None:
            raise _Invalid("not_a_choice", "A true/false item is answered true or false.", field="answer")
        return value
    if item.item_type == "multiple_choice" and item.choices:
        chosen = next((c for c in item.choices if c.strip().casefold() == text.casefold()), None)
        if chosen is None:
            raise _Invalid("not_a_choice", "The answer is not one of the item's choices.", field="answer")
        return chosen
    return text


def app_sessions(engine: Engine, *, model: Callable[[], Any]) -> TestSessions:
    """The quiz app's tests on `engine`: items from the shipped bank (loaded on first use), short answers graded by
    the model `model()` makes (seed tool 6), the items recalibrated after each test."""
    from ._bank import ensure_bank

    return TestSessions(
        engine, short_answers=model_short_answers(model), prepare_bank=ensure_bank, recalibrate=recalibrate_items
    )


def answered_in_open_test(engine: Engine, principal: str) -> frozenset[str] | None:
    """The items `principal` has answered in its test in progress, or None when it has no test in progress. While it
    has one, every other item of the bank is shown or may be shown to it: its key is not for it to read."""
    with engine.connect() as conn:
        if not conn.dialect.has_table(conn, test_sessions.name):
            return None  # no test was ever taken here
        session_id = TestSessions._open_id(conn, principal)
        if session_id is None:
            return None
        i = test_items
        answered = conn.execute(
            select(i.c.question_id).where(i.c.session_id == session_id, i.c.answer.is_not(None))
        ).scalars()
        return frozenset(answered)


def _rng(seed: int, position: int) -> np.random.Generator:
    return np.random.default_rng([seed, position])


def _questions(conn: Connection, ids: Sequence[str]) -> dict[str, _Item]:
    if not ids:
        return {}
    rows = conn.execute(select(_db.questions).where(_db.questions.c.id.in_(list(ids)))).mappings()
    return {row["id"]: _item(row) for row in rows}


def _feedback(row: Mapping[str, Any], item: _Item) -> Feedback:
    grader = json.loads(row["grader"] or "{}")
    return Feedback(
        position=row["position"],
        question_id=row["question_id"],
        answer=row["answer"],
        score=row["score"],
        is_correct=bool(row["is_correct"]),
        correct_answer=truth(item.key) if item.item_type == "true_false" else item.key,
        correct_keywords=item.keywords,
        explanation=item.explanation,
        grader_explanation=grader.get("explanation"),
        grader_feedback=grader.get("feedback"),
        graded_by=row["graded_by"],
        theta=row["theta"],
        se=row["se"],
    )


def _view(session: Mapping[str, Any], rows: list[Mapping[str, Any]], questions: Mapping[str, _Item]) -> SessionView:
    rules = json.loads(session["rules"])
    answered = [r for r in rows if r["answer"] is not None]
    feedback = [_feedback(r, questions[r["question_id"]]) for r in answered]
    shown = next((r for r in rows if r["answer"] is None), None) if session["status"] == "in_progress" else None
    trajectory = [Point(position=0, theta=session["prior_mean"], se=PRIOR_SD)] + [
        Point(position=f.position, theta=f.theta, se=f.se, is_correct=f.is_correct) for f in feedback
    ]
    finished = session["status"] == "finished"
    return SessionView(
        id=session["id"],
        status=session["status"],
        lang=session["lang"],
        profile=ProfileForm.model_validate_json(session["profile"]),
        answered=len(answered),
        min_items=rules["min_items"],
        max_items=rules["max_items"],
        se_target=rules["se_target"],
        theta=session["theta"],
        se=session["se"],
        item=questions[shown["question_id"]].view(shown["position"]) if shown is not None else None,
        last=feedback[-1] if feedback else None,
        stop_reason=session["stop_reason"],
        trajectory=trajectory,
        review=[Reviewed(item=questions[f.question_id].view(f.position), feedback=f) for f in feedback]
        if finished
        else None,
        started_at=session["created_at"],
        finished_at=session["finished_at"],
    )


# ---- the plot ---------------------------------------------------------------------------------------------------


def ability_svg(trajectory: Sequence[Point], *, lang: str, width: int = 640, height: int = 300) -> str:
    """The ability estimate after each item with its uncertainty (θ ± SE, a band), as an SVG image: item number
    across, θ up; each answer's point green (correct) or red (not). Words in `lang`."""
    left, right, top, bottom = 64, 16, 20, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    n = max(1, len(trajectory) - 1)
    lows = [p.theta - p.se for p in trajectory]
    highs = [p.theta + p.se for p in trajectory]
    lo = math.floor(min([-3.0, *lows]))
    hi = math.ceil(max([3.0, *highs]))

    def x(position: int) -> float:
        return left + plot_w * position / n

    def y(theta: float) -> float:
        return top + plot_h * (hi - theta) / (hi - lo)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(t("quiz.take.plot.title", lang))}" font-family="sans-serif" font-size="12">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    for tick in range(lo, hi + 1):
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="{"#9aa4b2" if tick == 0 else "#e3e7ee"}"/>'
        )
        parts.append(f'<text x="{left - 8}" y="{y(tick) + 4:.1f}" text-anchor="end" fill="#4a5568">{tick:+d}</text>')
    step = max(1, math.ceil(n / 12))
    for position in range(0, n + 1, step):
        parts.append(
            f'<text x="{x(position):.1f}" y="{height - bottom + 18}" text-anchor="middle" fill="#4a5568">{position}</text>'
        )
    band = [f"{x(p.position):.1f},{y(p.theta + p.se):.1f}" for p in trajectory]
    band += [f"{x(p.position):.1f},{y(p.theta - p.se):.1f}" for p in reversed(trajectory)]
    parts.append(f'<polygon points="{" ".join(band)}" fill="#3b82f6" fill-opacity="0.18" stroke="none"/>')
    line = " ".join(f"{x(p.position):.1f},{y(p.theta):.1f}" for p in trajectory)
    parts.append(f'<polyline points="{line}" fill="none" stroke="#1d4ed8" stroke-width="2"/>')
    for p in trajectory:
        colour = "#6b7280" if p.is_correct is None else "#16a34a" if p.is_correct else "#dc2626"
        parts.append(
            f'<circle cx="{x(p.position):.1f}" cy="{y(p.theta):.1f}" r="4" fill="{colour}"><title>'
            f"{escape(t('quiz.take.plot.point', lang, position=p.position, theta=p.theta, se=p.se))}</title></circle>"
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 8}" text-anchor="middle" fill="#1f2937">{escape(t("quiz.take.plot.x", lang))}</text>'
    )
    parts.append(
        f'<text x="16" y="{top + plot_h / 2:.1f}" text-anchor="middle" fill="#1f2937" '
        f'transform="rotate(-90 16 {top + plot_h / 2:.1f})">{escape(t("quiz.take.plot.y", lang))}</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts)
