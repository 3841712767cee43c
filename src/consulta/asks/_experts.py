"""Experts and the `consult_expert` tool (seed 000): the orchestrator consults an expert; the expert does its work in
code (open the file, run the snippet), its model writes a typed answer, the app's binding rules are applied in code,
and the consultation goes on record in the ledger.

Errors are the seeds' shape and record nothing as done: `missing_reasoning`, `unknown_output_type`,
`unknown_scenario`, `invalid_arguments` (the request), `unknown_expert`, `output_type_not_offered`,
`consultation_budget_exceeded` (the per-task limit: don't over-consult). An answer that never fits its type is
recorded as a failed consultation and returned as `invalid_expert_output`.
"""

from __future__ import annotations

import functools
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model
from pydantic_ai.models import Model

from ..i18n import language_name
from ..runtime import (
    ConsultationRecord,
    RunLog,
    RunRecorder,
    RunStatus,
    Store,
    ToolCallContext,
    ToolDef,
    ToolError,
    current_tool_call,
    reply_lang,
    typed_answer,
    utcnow,
)
from ._binding_rules import RuleBook
from ._consult import OUTPUT_TYPES, ConsultRequest, ConsultResult, ExpertOutput, OutputType, parse_consult_request
from ._ledger import write_consultation_markdown

__all__ = ["CONSULT_EXPERT_TOOL_NAME", "Consultant", "Expert", "consult_expert_tool", "keep_consultation"]

CONSULT_EXPERT_TOOL_NAME = "consult_expert"

Facts = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Expert:
    """An expert an app offers: a role, the output types it answers with, and the work it does in code."""

    expert_id: str
    role: str
    """The expert model's instructions."""
    output_types: tuple[OutputType, ...]
    prepare: Callable[[ConsultRequest], ConsultRequest] | None = None
    """Complete the request with what code knows (e.g. the only uploaded file when none is named), before anything
    else; the ledger keeps the completed request."""
    inspect: Callable[[ConsultRequest], Facts | Awaitable[Facts]] | None = None
    """Work done in code before the model writes (e.g. open the student's file, run their snippet): the facts are
    given to the model and kept in the ledger. Raise ToolError when the request cannot be served (nothing is done)."""
    answer: Callable[[ConsultRequest, Facts], ExpertOutput | None] | None = None
    """The whole answer, from the facts, when code knows all of it (e.g. a dataset's verdict and the step that
    follows from it): the model is not asked (seconds saved on a small local model); None asks the model."""
    given: Callable[[ConsultRequest, Facts], dict[str, Any]] | None = None
    """Fields of the answer code sets itself, from the facts (e.g. what running the student's code raised): the
    model is asked for the other fields only (each token a small local model does not generate is time saved), and
    code's values are put in before `complete`."""
    complete: Callable[[ConsultRequest, Facts, ExpertOutput], ExpertOutput] | None = None
    """Put what code established over the model's answer (e.g. the verdict of the data checks): the model only
    writes the prose."""
    check: Callable[[ConsultRequest, Facts, ExpertOutput], None] | None = None
    """A check of the (completed) answer in code (raise ValueError saying why: the answer is regenerated)."""

    def finish(self, request: ConsultRequest, facts: Facts, output: ExpertOutput) -> ExpertOutput:
        """The answer completed by code, then checked (ValueError when it must be regenerated)."""
        done = self.complete(request, facts, output) if self.complete is not None else output
        if self.check is not None:
            self.check(request, facts, done)
        return done


class Consultant:
    """Serves `consult_expert` for one app: its experts, its binding rules, its budget, the ledger."""

    def __init__(
        self,
        *,
        store: Store,
        experts: Sequence[Expert],
        rules: RuleBook,
        resolve_model: Callable[[str], Model],
        model: str,
        budget_per_task: int = 3,
        retries: int = 2,
        ledger_dir: Path | None = None,
        lang: str = "en",
    ) -> None:
        self.store = store
        self.experts = {e.expert_id: e for e in experts}
        self.rules = rules
        self.resolve_model = resolve_model
        self.model = model
        self.budget_per_task = budget_per_task
        self.retries = retries
        self.ledger_dir = ledger_dir
        self.lang = lang

    async def consult(
        self, arguments: Any, *, run_id: str | None = None, tool_call_id: str | None = None
    ) -> dict[str, Any]:
        """Run one consultation; the seed's result as a dict (ToolError for a request that cannot be served)."""
        call = current_tool_call()
        run_id = run_id or (call.run_id if call else None)
        tool_call_id = tool_call_id or (call.tool_call_id if call else None)
        request = parse_consult_request(arguments)
        expert = self._expert(request)
        if expert.prepare is not None:
            request = expert.prepare(request)
        self._within_budget(request, run_id)
        started, clock = utcnow(), time.perf_counter()
        facts = await _maybe_await(expert.inspect(request)) if expert.inspect is not None else {}
        output_type = OUTPUT_TYPES[request.expected_output_type]
        expert_run = self._expert_run(expert, request, call=call, run_id=run_id)
        record = {
            "expert_id": expert.expert_id,
            "request": request.model_dump(mode="json"),
            "run_id": run_id,
            "tool_call_id": tool_call_id,
            "expert_run_id": expert_run.run.id,
        }
        try:
            by_code = expert.answer(request, facts) if expert.answer is not None else None
            if by_code is not None:
                output, attempts, messages = expert.finish(request, facts, by_code), 0, None
            else:
                preset = expert.given(request, facts) if expert.given is not None else {}

                def whole(asked: Any) -> ExpertOutput:
                    return output_type.model_validate({**asked.model_dump(), **preset}) if preset else asked

                answer = await typed_answer(
                    model=self.resolve_model(self.model),
                    instructions=_instructions(expert, output_type.__name__, request.expected_output_type),
                    prompt=_prompt(request, facts, lang=self._reader_lang(run_id)),
                    output_type=without_fields(output_type, frozenset(preset)),
                    check=lambda output: expert.finish(request, facts, whole(output)),
                    retries=self.retries,
                    within=call,
                )
                output = expert.finish(request, facts, whole(answer.output))
                attempts, messages = answer.attempts, answer.messages
        except ToolError as error:
            expert_run.end(RunStatus.failed, error=error.message)
            self._keep(
                status="failed", started=started, clock=clock, attempts=self.retries + 1, error=error.message, **record
            )
            raise
        except BaseException as error:  # the expert's run ends on record whatever stopped it
            expert_run.end(RunStatus.failed, error=f"{type(error).__name__}: {error}")
            raise
        expert_run.end(RunStatus.finished, output=output.model_dump_json(), messages=messages)
        outcome = self.rules.evaluate(output)  # type: ignore[arg-type]
        kept = self._keep(
            status="done",
            started=started,
            clock=clock,
            attempts=attempts,
            expert_output=output.model_dump(mode="json"),
            binding_rules=[t.model_dump() for t in outcome.triggered],
            instruction_updates=outcome.instruction_updates,
            **record,
        )
        return ConsultResult(
            consultation_id=kept,
            expert_id=expert.expert_id,
            expert_output=output.model_dump(mode="json"),
            binding_rules_triggered=outcome.triggered,
            instruction_updates=outcome.instruction_updates,
        ).model_dump(mode="json")

    def _expert_run(
        self, expert: Expert, request: ConsultRequest, *, call: ToolCallContext | None, run_id: str | None
    ) -> RunLog:
        """The expert's own run, recorded like every run: under the consulting run, in its trace (through the run's
        log inside a tool call, so its events reach the same listeners)."""
        fields: dict[str, Any] = {
            "agent": expert.expert_id,
            "app": f"expert:{expert.expert_id}",
            "prompt": request.question,
            "model": self.model,
            "lang": self.lang,
        }
        if call is not None and call.log is not None and call.run_id == run_id:
            return call.log.nested(**fields)
        return RunRecorder(self.store).nested(self.store.get_run(run_id) if run_id else None, **fields)

    def _reader_lang(self, run_id: str | None) -> str:
        """The language of the person the consulting run answers (Chinese when they wrote Chinese, else the run's):
        the expert's texts are written in it, so what is passed on to that person needs no translation."""
        run = self.store.get_run(run_id) if run_id else None
        return reply_lang(run.prompt, run.lang) if run is not None else self.lang

    def _expert(self, request: ConsultRequest) -> Expert:
        expert = self.experts.get(request.expert_id)
        if expert is None:
            raise ToolError(
                "unknown_expert",
                f"There is no expert {request.expert_id!r}.",
                hint=f"Available experts: {', '.join(self.experts)}.",
                field="expert_id",
            )
        if request.expected_output_type not in expert.output_types:
            raise ToolError(
                "output_type_not_offered",
                f"{expert.expert_id} does not answer with {request.expected_output_type}.",
                hint=f"{expert.expert_id} offers: {', '.join(expert.output_types)}.",
                field="expected_output_type",
            )
        return expert

    def _within_budget(self, request: ConsultRequest, run_id: str | None) -> None:
        task = request.context.task_id
        if run_id is None:
            return
        used = [
            c
            for c in self.store.list_consultations(run_id=run_id, limit=1000)
            if c.request.get("context", {}).get("task_id") == task and c.status == "done"
        ]
        if len(used) >= self.budget_per_task:
            raise ToolError(
                "consultation_budget_exceeded",
                f"Task {task} has had {len(used)} consultations, its limit: don't over-consult.",
                hint="Use what the experts already said (their consultation ids: "
                + ", ".join(c.id for c in used)
                + ").",
            )

    def _keep(self, *, status: str, started: str, clock: float, attempts: int, **fields: Any) -> str:
        return keep_consultation(
            self.store, status=status, started=started, clock=clock, attempts=attempts, ledger_dir=self.ledger_dir,
            lang=self.lang, **fields,
        ).id  # fmt: skip


def keep_consultation(
    store: Store, *, status: str, started: str, clock: float, attempts: int, ledger_dir: Path | None = None,
    lang: str = "en", **fields: Any,
) -> ConsultationRecord:  # fmt: skip
    """A consultation on record: its ledger row (numbered `consult_NNNN`; `fields` are the row's: expert_id, request,
    run_id, tool_call_id, expert_run_id, expert_output, error, …), its duration from `clock` (a `perf_counter` reading
    taken when it began), and its markdown in `ledger_dir` when given. Every consultation of every app is kept so:
    `consult_expert`'s and those an app's own orchestration makes (e.g. a team whose members consult each other)."""
    kept = store.record_consultation(
        status=status, started_at=started, duration_ms=(time.perf_counter() - clock) * 1000, attempts=attempts, **fields
    )
    if ledger_dir is not None:
        write_consultation_markdown(kept, ledger_dir, lang=lang)
    return kept


def consult_expert_tool(consultant: Consultant) -> ToolDef:
    """The `consult_expert` tool of an app's orchestrator (its parameters are the seed's; see ConsultRequest)."""

    async def consult_expert(**arguments: Any) -> dict[str, Any]:
        return await consultant.consult(arguments)

    experts = "; ".join(f"{e.expert_id} ({', '.join(e.output_types)})" for e in consultant.experts.values())
    return ToolDef(
        name=CONSULT_EXPERT_TOOL_NAME,
        function=consult_expert,
        description=f"Consult an expert and get a typed answer; binding rules may update your instructions. Experts: {experts}.",
        parameters=ConsultRequest.model_json_schema(),
    )


async def _maybe_await(value: Facts | Awaitable[Facts]) -> Facts:
    return await value if inspect.isawaitable(value) else value  # type: ignore[return-value]


@functools.cache
def without_fields(output_type: type[ExpertOutput], fields: frozenset[str]) -> type[BaseModel]:
    """`output_type` without `fields` (those code sets): the type the model is asked for, under the same name. A
    model that writes one of them anyway is not refused for it (code's value is the one kept)."""
    if not fields:
        return output_type
    kept = {name: (f.annotation, f) for name, f in output_type.model_fields.items() if name not in fields}
    config = ConfigDict(**{**output_type.model_config, "extra": "ignore"})  # type: ignore[typeddict-item]
    return create_model(output_type.__name__, __config__=config, **kept)  # type: ignore[call-overload,no-any-return]


def _instructions(expert: Expert, type_name: str, output_type: str) -> str:
    return (
        f"{expert.role}\n\nAnswer with one {output_type} ({type_name}): fill every field from the facts given; invent "
        "nothing. Be brief: each text one or two short sentences, each list at most two items."
    )


def _prompt(request: ConsultRequest, facts: Facts, *, lang: str = "en") -> str:
    """The request and code's facts; the language to write in last (a small model follows the prompt's last line
    better than its instructions: seen, an explanation in English for a Chinese student)."""
    parts = [
        f"Question: {request.question}",
        "Context: " + json.dumps(request.context.model_dump(exclude_none=True), ensure_ascii=False),
    ]
    if facts:
        known = {k: v.model_dump(mode="json") if hasattr(v, "model_dump") else v for k, v in facts.items()}
        parts.append("Facts established in code: " + json.dumps(known, ensure_ascii=False, default=str))
    parts.append(f"Write every text in {language_name(lang)}.")
    return "\n".join(parts)
