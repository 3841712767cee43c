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

The parts, one job each: what goes wrong (`_test_errors`), the profile form and the prior it sets (`_test_profile`),
the bank as a test sees it (`_test_pool`), what front ends show (`_test_views`), the plot (`_ability_plot`), the
grading (`_grading`); this module is the state machine. The sessions' own tables (`quiz_test_sessions`, `quiz_test_items`) are quiz's (`_db`), migrated with the store. A session belongs to the principal that started it (a web session, the terminal's `local`): another
principal's session is `not_found`, exactly like an unknown one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

import numpy as np
from pydantic import ValidationError
from sqlalchemy import func, select, update
from sqlalchemy.engine import Connection, Engine

from ...i18n import normalize_lang
from ...runtime import writing
from . import _db
from ._ability_plot import ability_svg
from ._cat import CatRules, next_item, stop_reason
from ._db import metadata, test_items, test_sessions
from ._grading import FALLBACK, Scored, ShortAnswer, ShortAnswerScorer, model_short_answers, score_exact, truth
from ._irt import eap
from ._profiles import ProfileState, profile_book
from ._test_errors import TestSessionError, _Conflict, _Invalid, _unknown_session, _Words
from ._test_pool import _Item, _level_derived, _Pool, _questions
from ._test_profile import PRIOR_SD, ProfileForm, parse_profile, prior_mean, user_id_of
from ._test_views import AnswerResult, Feedback, ItemView, Point, Reviewed, SessionView, _feedback, _view

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


# ---- tables -----------------------------------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


# ---- scoring ----------------------------------------------------------------------------------------------------


def recalibrate_items(engine: Engine) -> None:
    """Recalibrate the items from the responses recorded (quiz-irt's `recalibrate`): run after a test ends."""
    from ._calibration import recalibrate

    recalibrate(engine)


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
        self.profiles = profile_book(engine)
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
        state = self.profiles.find(user_id_of(principal))
        if state is None:
            return None
        try:
            return ProfileForm.model_validate(state.model_dump(include=set(ProfileForm.model_fields)))
        except ValidationError:  # a profile saved by another part (tool 1's), outside this form's bounds
            return None

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
            before = self.profiles.find(user_id, conn=conn, for_update=True)  # its last test's score is kept
            score = before.previous_score if before is not None else 0.0
            self.profiles.save(
                user_id, ProfileState(**checked.model_dump(), lang=lang, previous_score=score), conn=conn
            )
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
            derived = _level_derived(conn, rows)
        return _view(session, rows, questions, derived)

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
        # An answer the grader could not grade in time is no evidence either way: left out of θ and of calibration.
        graded = [
            r for r in rows if r["answer"] is not None and r["position"] != position and r["graded_by"] != "fallback"
        ]
        this = [next(r for r in rows if r["position"] == position)] if scored.graded_by != "fallback" else []
        a = [r["a"] for r in graded + this]
        b = [r["b"] for r in graded + this]
        u = [r["is_correct"] for r in graded] + [1 if scored.is_correct else 0 for _ in this]
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
        if this and conn.execute(select(func.count()).select_from(r).where(r.c.id == response_id)).scalar() == 0:
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
        derived = _level_derived(conn, rows)
        reason: str | None = stop_reason(se=se, n=len(u), rules=rules, level_derived=any(derived.values()))
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
            person = self.profiles.find(session["user_id"], conn=conn, for_update=True)
            if person is not None:
                score = round(sum(u) / len(u) * 100.0, 1)
                self.profiles.save(session["user_id"], person.model_copy(update={"previous_score": score}), conn=conn)
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
