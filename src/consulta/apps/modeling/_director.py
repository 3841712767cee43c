"""The Director (seed 002): code running the team one agent at a time, over the phases of a run, with the
consultations between the agents and the validation gates between the phases.

The flow: reader → researcher → modeler (analysis) → data_engineer (gate data_ready) → code_translator (gate
code_runs) → model_trainer (gate results_trained) → visualizer → writer → the PDF (gate paper_written). A REJECTED
gate sends its phase's work back with the reasons, up to `MAX_ATTEMPTS` times, then the Director escalates to the
person (`Escalation`; the app turns it into the runtime's `question`): accept the work as it is, try again, or stop.

Consultation (§2): an agent's answer may ask to consult a colleague. The Director checks the request against its rules
(`_consultations.refusal`: refused ones go on record in the store's ledger with the reason, and are told to the
asker). Otherwise it pauses the asker, has the colleague answer (it may consult in turn, one agent at a time), writes
`consultation/{from}_{to}_{i}.md` (`_consult`), hands the reply back, and when the asker has used it fills the
record's 结果.

Each agent's answer is a nested run of the Director's run, made within its tool call (its model requests count against
the run's usage limits) and ended on every path: finished, failed, or cancelled when the run is stopped. Durable:
what the Director learns is recorded as the run's durable steps (`_memo`: the conversation's steps on the store)
before the next step; a run killed at any point and resumed from its checkpoint replays them: no agent is asked twice,
no record written twice, the numbering goes on where it stopped, and a member's run the killed process left `running`
is ended `failed`. The team's code: `_team_code`.

When the statement names its tasks, the modeler chooses a model family for each (`_task_models`); when it chose one
that the data and the statement support for any task, the tasks' families stand in for the template model: their
scripts are the code the code_runs gate runs and their results what the later gates and the paper read.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic_ai.models import Model

from ...runtime import (
    RunLog,
    RunStatus,
    Store,
    ToolCallContext,
    ToolError,
    crash_point,
    typed_answer,
    utcnow,
)
from ._compose import PaperParts, compose_paper, whole_sentences
from ._consult import (
    ConsultationRequest,
    Reply,
    fill_outcome,
    record_markdown,
    record_name,
    reply_text,
    request_text,
)
from ._consultations import DIRECTOR, Refusal, TeamConfig, agent_named, brief, ledger, refusal
from ._files import create_once, write_atomic
from ._findings import data_account, findings
from ._gates import (
    MAX_ATTEMPTS,
    Gate,
    Verdict,
    code_verdict,
    read_validation_record,
    record_path,
    validation_records,
    write_validation_record,
)
from ._memo import NOT_DONE, LocalSteps, Memo, Steps, clock, pending_escalation, step_key, thread_steps
from ._paper import render_pdf
from ._plan import Plan, plan_for
from ._problem import Problem
from ._sandbox_run import ScriptRun
from ._shape import DataShape, describe_data
from ._task_models import (
    TaskModel,
    choose_models,
    models_not_run,
    models_run,
    record,
    recorded,
    run_task_models,
    task_answer,
)
from ._tasks import TaskAnswer, answer_of, statement_tasks
from ._team import (
    LINE_LENGTH,
    ROLES,
    Answer,
    CodeTranslatorWork,
    DataEngineerWork,
    Mode,
    ModelerWork,
    ModelTrainerWork,
    ReaderWork,
    ResearcherWork,
    TeamAnswer,
    ValidatorWork,
    VisualizerWork,
    WriterWork,
    instructions,
    output_type,
    scenario_type,
)
from ._team_code import draft_problem, run_in_sandbox, strip_fence, write_script
from ._templates import KINDS, script
from .families import ProblemData

__all__ = ["Decision", "Director", "Escalation", "Refusal", "Stopped", "TeamConfig", "clock", "pending_escalation"]

Decision = Literal["accept", "retry", "stop"]
_Work = TypeVar("_Work", bound=TeamAnswer)
PHASES = {
    "reader": "analysis", "researcher": "analysis", "modeler": "analysis", "data_engineer": "data", "code_translator": "code",
    "model_trainer": "training", "visualizer": "writing", "writer": "writing",
}  # fmt: skip
"""The phase each agent works in (a consulted agent works in its asker's; the validator in its gate's)."""
_MAX_REQUESTS_PER_TURN = 3
"""Consultations one answer of an agent may ask for in a row (refused ones included) before its requests are ignored."""
_ANSWER_STANDS = frozenset({"repeated", "budget_exhausted"})
"""Refusals after which the asker's answer stands as it is: it already has the reply it asks for again, or it is told
to work with what it has (seen on the embedded model: the modeler asked the data engineer's answered question twice
more, each refusal costing a full answer of ~23 s)."""


class Escalation(Exception):
    """A gate was REJECTED `MAX_ATTEMPTS` times: the person decides (accept, retry, stop)."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(f"{verdict.gate} was rejected {verdict.attempt} times")
        self.verdict = verdict


class Stopped(Exception):
    """The person chose to stop the run at an escalation."""


def rejection_shows_evidence(reasons: list[str], names: set[str]) -> bool:
    """Whether a REJECTED verdict's reasons show evidence: one of them names a file of the workspace (`names`) and is
    a finished sentence (seen on the embedded model, three times in a run: "The file 'clean_data.py' is not correct.
    It should be named 'clean_data.py' and", cut at its length limit, which stopped a sound run for the person)."""
    return any(
        name in reason and re.search(r"[.!?。！？)）]\s*$", reason.strip()) is not None
        for reason in reasons
        for name in names
        if not re.search(rf"named\s+['\"`]?{re.escape(name)}", reason)  # "should be named X" of X itself says nothing
        and not _missing(name).search(reason)  # `names` are there: "X is missing" is false (seen: 3 times in a run)
    )


def _missing(name: str) -> re.Pattern[str]:
    """A sentence saying the file `name` is missing ("The file 'x.py' is missing", "x.py does not exist", "缺少 x.py")."""
    q, n = "['\"`‘’“”「」]?", re.escape(name)
    return re.compile(
        rf"{n}{q}\s*(?:file\s*)?(?:is|was|are)\s+(?:missing|absent|not\s+(?:found|present|there))(?!\s+(?!from\b|which\b|and\b|but\b)\w)"
        rf"|{n}{q}\s*(?:file\s*)?(?:does\s+not|doesn't|did\s+not|didn't)\s+exist"
        rf"|(?:missing|no|absent)\s+(?:file\s+)?{q}{n}"
        rf"|(?:缺少|缺失|没有|找不到|未找到)\s*(?:文件)?\s*{q}{n}|{n}{q}\s*(?:文件)?\s*(?:不存在|缺失|没有找到|找不到)",
        re.I,
    )


class Director:
    """Runs the team over one workspace. `model` answers for every agent; `call` is the Director's tool call when
    it runs inside a run (the agents' answers are then nested runs of it, their events told to the same listeners,
    and the consultations go into `store`'s ledger). `steps` records what it learns (default: the durable steps of
    the call's conversation on `store`; outside any run, steps in memory: nothing to resume)."""

    def __init__(
        self, *, workspace: Path, problem: Problem, model: Model, model_spec: str = "", store: Store | None = None,
        call: ToolCallContext | None = None, config: TeamConfig = TeamConfig(), lang: str = "zh-CN",
        decision: Decision | None = None, answer_timeout: float = 600.0, steps: Steps | None = None,
    ) -> None:  # fmt: skip
        self.ws = Path(workspace)
        self.problem = problem
        self.model = model
        self.model_spec = model_spec
        self.store = store
        self.call = call
        self.config = config
        self.lang = lang
        self.decision = decision
        self.answer_timeout = answer_timeout
        if steps is None:
            steps = thread_steps(store, call.run_id) if store is not None and call is not None else LocalSteps()
        self.steps = steps
        self.memo = Memo(self.ws / "state" / "director.json", steps)
        self._counters: dict[str, int] = {}
        self.member_runs: list[tuple[str, str]] = []
        """(agent, run id) of each member's run this Director opened, in order."""
        self.unfit: dict[str, str] = {}
        """Agent → why its last answer did not fit its form (code's words stood in)."""

    def counts(self) -> dict[str, int]:
        """What the run did, from its memo and records: the agents' answers, the consultations made and refused, and
        the reworks (REJECTED verdicts)."""
        consults = list(self.memo["consults"].values())
        rejected = [
            p for p in (self.ws / "validation").glob("*.md") if "\n## 结论\n\nREJECTED" in p.read_text(encoding="utf-8")
        ]
        return {
            "answers": len(self.memo["answers"]),
            "consultations": sum(c["status"] == "done" for c in consults),
            "refused": sum(c["status"] == "refused" for c in consults),
            "reworks": len(rejected),
        }

    # ---- the flow -------------------------------------------------------------------------------------------------

    async def run(self) -> Path:
        """The whole flow to the paper's PDF (its path). Escalation when a gate needs the person; Stopped when they
        said stop."""
        self._close_stale_members()
        reader = typed(
            ReaderWork,
            await self.turn(
                "reader",
                "work",
                step="reader",
                task="读题：概括问题要点，列出要回答的问题。",
                prompt=self._problem_prompt(),
            ),
        )
        research = typed(ResearcherWork, await self.turn(
            "researcher", "work", step="researcher", task="推荐建模方法。",
            prompt=self._problem_prompt() + "\n\n问题分析：" + reader.summary,
        ))  # fmt: skip
        modeler = typed(ModelerWork, await self.turn(
            "modeler", "work", step="modeler", task="给出假设与模型，并从数据的列中选出目标列与解释变量。",
            prompt=self._problem_prompt() + "\n\n推荐方法：" + research.recommendation + "\n\n" + self._data_prompt(),
        ))  # fmt: skip
        tasks = self.problem.tasks or statement_tasks(
            self.problem.statement
        )  # as corrected on the page, else the statement's
        models = await choose_models(self, tasks, ProblemData.load(self.ws / "problem", self.problem.statement))
        record(self, models)
        by_task = any(m.status == "chosen" for m in models)  # the tasks' families stand in for the template model
        shape = describe_data(self.ws / "problem")
        choices = modeler.model_dump()
        if shape.kind == "regression" and not by_task:  # the tasks' families need no template case (a turn saved)
            choices["scenario"] = await self._scenario(shape, choices)
        plan, notes = plan_for(shape, choices, self.problem.statement)
        self._note(
            "plan",
            [
                f"model: {plan.kind} of {plan.target} on {', '.join(plan.covariates) or 'time'} ({shape.main_table})",
                *notes,
            ],
        )

        async def data_work(attempt: int, reasons: list[str]) -> None:
            engineer = typed(
                DataEngineerWork,
                await self.turn(
                    "data_engineer",
                    "work",
                    step=f"data_engineer#{attempt}",
                    task=_task("清洗数据。", reasons),
                    prompt=self._data_prompt(),
                ),
            )
            self._keep_answer("data_notes", engineer.cleaning_notes)
            self._write_script("clean_data", script("clean_data", plan), origin="template")
            await self._run_script("clean_data")

        await self.phase("data_ready", "data", data_work)

        async def code_work(attempt: int, reasons: list[str]) -> None:
            nonlocal models
            if by_task:  # code/task<n>_<family>.py, from the library, run in the sandbox
                models = await run_task_models(self, models)
                record(self, models)
                return
            translator = typed(CodeTranslatorWork, await self.turn(
                "code_translator", "work", step=f"code_translator#{attempt}", task=_task("把模型写成 code/model.py（或留空用模板）。", reasons),
                prompt=f"模型：{modeler.model_description}\n模板的函数：{', '.join(sorted(KINDS[plan.kind].functions))}\n" + self._data_prompt(),
            ))  # fmt: skip
            await self._model_code(translator.code, plan, attempt)

        await self.phase("code_runs", "code", code_work)

        async def train_work(attempt: int, reasons: list[str]) -> None:
            nonlocal plan, models
            if by_task:  # a task whose script did not run yet (a rework) runs now
                models = await run_task_models(self, models)
                record(self, models)
                return
            trainer = typed(ModelTrainerWork, await self.turn(
                "model_trainer", "work", step=f"model_trainer#{attempt}", task=_task(f"选择{KINDS[plan.kind].holdout_words}并训练模型。", reasons),
                prompt=f"模型：{plan.kind}，目标列 {plan.target}，数据 {shape.rows[plan.table]} 行。",
            ))  # fmt: skip
            holdout = trainer.holdout
            if holdout:
                plan, more = plan_for(shape, {**choices, "holdout": holdout}, self.problem.statement)
                self._note("training", more)
            self._write_script("train", script("train", plan), origin="template")
            await self._run_script("train")

        await self.phase("results_trained", "training", train_work)

        async def paper_work(attempt: int, reasons: list[str]) -> None:
            viz = typed(
                VisualizerWork,
                await self.turn(
                    "visualizer",
                    "work",
                    step=f"visualizer#{attempt}",
                    task="给图起名。",
                    prompt=f"目标列：{plan.target}。两幅图：{KINDS[plan.kind].figure_words}。",
                ),
            )
            label = viz.target_label
            if not by_task:
                self._write_script(
                    "figures",
                    script("figures", plan.model_copy(update={"target_label": _no_digits(label)})),
                    origin="template",
                )
                await self._run_script("figures")
            found = [] if by_task else findings(self.ws, kind=plan.kind, target=plan.target, lang=self.problem.lang)
            results = {p.name for p in (self.ws / "results").glob("*.csv")}
            of_task = {m.task.number: m for m in models}
            answers = [
                _answer(of_task.get(t.number), answer_of(t, kind=plan.kind, target=plan.target, results=results, lang=self.problem.lang), self.ws, self.problem.lang)
                for t in tasks
            ]  # fmt: skip
            ran = models_run(models, lang=self.problem.lang) if by_task else []  # what ran, not what was planned
            writer = typed(WriterWork, await self.turn(
                "writer", "work", step=f"writer#{attempt}", task=_task("写摘要、讨论与结论（不要写数字）。", reasons),
                prompt=self._results_prompt() + "\n\n模型：" + (" ".join(ran) or modeler.model_description)
                + "".join(f"\n\n{_said(a)}" for a in answers if by_task),
            ))  # fmt: skip
            parts = PaperParts(
                title=self.problem.title, lang=self.problem.lang, summary=whole(reader, "summary"),
                tasks=[t.text for t in tasks] or whole_items(reader, "tasks"), answers=answers, models=ran, not_run=models_not_run(models) if by_task else [],
                assumptions=not_given(whole_items(modeler, "assumptions"), f"{self.problem.title}\n{self._problem_prompt()}\n{self._data_prompt()}"),
                method=whole(research, "recommendation"),
                model_description=whole(modeler, "model_description"), model_formula="" if by_task else KINDS[plan.kind].formula,
                data_notes=self.memo["notes"].get("data_notes", ""),
                data_account=data_account(self.ws, lang=self.problem.lang, used=_files_used(models, plan, by_task=by_task)),
                findings=[f.text for f in found], headline=[f.text for f in found if f.headline], abstract=whole(writer, "abstract"),
                discussion=whole(writer, "discussion"), conclusion=whole(writer, "conclusion"),
                captions=whole_items(viz, "captions"), figures=[] if by_task else list(KINDS[plan.kind].figures), consultations=sorted(p.name for p in (self.ws / "consultation").glob("*.md")),
            )  # fmt: skip
            strict = attempt > 1  # a gate sent the paper back: every number is code's now
            compose_paper(self.ws, parts, strict=strict)
            self._note(
                f"paper#{attempt}",
                ["the team's sentences with digits left out (strict)" if strict else "the team's text as written"],
            )
            try:
                await asyncio.to_thread(render_pdf, self.ws)  # off the event loop: the page stays live
            except ToolError as error:
                self._note(f"pdf#{attempt}", [error.message])

        await self.phase("paper_written", "writing", paper_work)
        return self.ws / "paper" / "paper.pdf"

    async def _scenario(self, shape: DataShape, choices: dict[str, Any]) -> dict[str, float]:
        """The case the problem asks to predict, as the modeler reads it from the statement (column → value; code's
        checks in `plan_for` keep only the values the statement states and the data can carry)."""
        candidates, _ = plan_for(shape, choices, self.problem.statement)
        numeric = tuple(c for c in candidates.covariates if c not in shape.categorical)
        if not numeric:
            return {}
        ranges = "; ".join(
            f"{c}（数据中 {shape.ranges[c][0]:g} 到 {shape.ranges[c][1]:g}）" for c in numeric if c in shape.ranges
        )
        answer = await self.turn(
            "modeler", "work", step="modeler:scenario", output=scenario_type(numeric),
            task="题目是否要求预测一个给定的个体或情形（给出了它的特征取值）？如果是，在 values 中写出题目给出的每个特征的列名和题目中的数字；题目没有给出具体情形就让 values 为空列表。",
            prompt=self._problem_prompt() + "\n\n可用的解释变量：" + ranges,
        )  # fmt: skip
        return {v["column"]: v["value"] for v in answer.model_dump().get("values", [])}

    async def phase(self, gate: Gate, phase: str, work: Callable[[int, list[str]], Awaitable[None]]) -> Verdict:
        """Do `work` until `gate` passes (APPROVED or CONDITIONAL): each REJECTED sends it back with the reasons; after
        `MAX_ATTEMPTS` the person decides (a decision on record is replayed)."""
        attempt, reasons, limit, round_ = 1, [], MAX_ATTEMPTS, 0
        while True:
            recorded = self._recorded(gate, attempt)
            if (
                recorded is None or recorded.status != "REJECTED"
            ):  # a rejected attempt's work was redone after it: skip it
                await work(attempt, reasons)  # the agents' answers come from the memo when a run did this before
            verdict = recorded or await self.gate(gate, phase, attempt)
            if verdict.status != "REJECTED":
                return verdict
            if attempt >= limit:
                round_ += 1
                decision = self._decision(gate, round_, verdict)
                if decision == "accept":
                    return verdict
                if decision == "stop":
                    raise Stopped(f"The person stopped the run at gate {gate}.")
                limit += MAX_ATTEMPTS
            attempt, reasons = attempt + 1, verdict.reasons

    def _recorded(self, gate: Gate, attempt: int) -> Verdict | None:
        """The verdict of this gate and attempt when its record exists (a resumed run does not decide again)."""
        path = record_path(self.ws, gate, attempt)
        if not path.is_file():
            return None
        return read_validation_record(path)

    def _decision(self, gate: Gate, round_: int, verdict: Verdict) -> Decision:
        key = f"{gate}#{round_}"
        known = self.steps.result(step_key("decision", key))
        if known is NOT_DONE:
            if self.decision is None:
                self.steps.record(step_key("escalation", key), {"gate": gate, "attempt": verdict.attempt})
                self.memo.save()
                raise Escalation(verdict)
            known, self.decision = self.steps.record(step_key("decision", key), self.decision), None
            self.memo.save()
        return known  # type: ignore[no-any-return]

    async def gate(self, gate: Gate, phase: str, attempt: int) -> Verdict:
        """The verdict of `gate`: code's checks first (a failure decides REJECTED alone), else the validator's."""
        step = f"gate:{gate}#{attempt}"
        verdict = code_verdict(gate, self.ws, attempt=attempt)
        if verdict is not None:
            verdict = verdict.model_copy(update={"decided_at": clock()})
        else:
            judged = typed(ValidatorWork, await self.turn(
                "validator", "work", step=step, phase=phase, task=f"关卡 {gate}：代码检查已全部通过。判断产出能否进入下一阶段。",
                prompt=self._gate_prompt(gate), check=self._validator_check,
            ))  # fmt: skip
            status = judged.status
            reasons = [r for r in judged.reasons if r.strip()] or ["代码检查全部通过；验证者没有补充意见。"]
            verdict = Verdict(
                gate=gate, status=status, reasons=reasons, attempt=attempt, decided_by="validator", decided_at=clock()
            )
        write_validation_record(self.ws, verdict)
        crash_point(f"modeling.verdict:{gate}#{attempt}")
        verdict = read_validation_record(
            record_path(self.ws, gate, attempt)
        )  # the record is the truth (a resumed run kept the first)
        return verdict

    # ---- one agent's turn, with its consultations -----------------------------------------------------------------

    async def turn(
        self, agent: str, mode: Mode, *, step: str, task: str, prompt: str, phase: str | None = None, depth: int = 0,
        waiting: tuple[str, ...] = (), check: Callable[[TeamAnswer], None] | None = None, output: type[TeamAnswer] | None = None,
    ) -> TeamAnswer:  # fmt: skip
        """`agent`'s answer in `mode` (of type `output` when given, else its role's), after the consultations it asks
        for (each checked, made and recorded)."""
        phase = phase or PHASES.get(agent) or step.split("#")[0]
        answer = await self.answer(agent, mode, step=step, task=task, prompt=prompt, check=check, output=output)
        for _ in range(_MAX_REQUESTS_PER_TURN):
            to, question = (
                str(answer.model_dump().get("consult_agent", "")).strip(),
                str(answer.model_dump().get("consult_question", "")).strip(),
            )
            if not (to or question):
                break
            request = ConsultationRequest(
                from_agent=agent, to_agent=agent_named(to), question=question,
                background=f"{agent} 在做这件事时提出：{task.splitlines()[0]}",
            )  # fmt: skip
            outcome = await self.consult(request, step=step, phase=phase, depth=depth + 1, waiting=waiting)
            if isinstance(outcome, Refusal) and outcome.code in _ANSWER_STANDS:
                break  # on record in the ledger; the answer it came with stands (asking again would cost a turn)
            if isinstance(outcome, Refusal):
                told = f"Director 拒绝了这次咨询：{outcome.reason}"
                record = None
            else:
                reply, record = outcome
                told = reply_text(reply)
            mode = "work+reply" if mode.startswith("work") else "answer+reply"
            answer = await self.answer(
                agent, mode, step=step, task=task, prompt=f"{prompt}\n\n{request_text(request)}\n\n{told}", check=check
            )
            if record is not None:
                used = str(answer.model_dump().get("used_reply", "")).strip()
                # what happened, not a judgment: the asker went on; how it used the reply, in its own words
                fill_outcome(
                    record,
                    f"{agent} 收到回复后继续工作。使用方式：{used}"
                    if used
                    else f"{agent} 收到回复后继续工作（未说明如何使用）。",
                )
                crash_point(f"modeling.outcome:{record.name}")
        return answer

    async def answer(
        self, agent: str, mode: Mode, *, step: str, task: str, prompt: str, check: Callable[[TeamAnswer], None] | None = None,
        output: type[TeamAnswer] | None = None,
    ) -> TeamAnswer:  # fmt: skip
        """One typed answer of `agent` (from the memo when this run, or an earlier one, already had it)."""
        n = self._counters[f"{step}|{agent}|{mode}"] = self._counters.get(f"{step}|{agent}|{mode}", 0) + 1
        key = f"{step}|{agent}|{mode}|{n}"
        kind = output or output_type(agent, mode)
        known = self.steps.result(step_key("answer", key))
        if known is not NOT_DONE:
            self._unfit(agent, known.get("fallback"))
            return kind.model_validate(known["output"])
        text = instructions(agent, mode, task=task)
        log = self._nested(agent, f"{task}\n\n{prompt}"[:2000])
        if log is not None:
            self.member_runs.append((agent, log.run.id))
        started = time.perf_counter()
        try:
            output, fallback = await self._typed(agent, mode, kind, text, prompt, check)
        except asyncio.CancelledError:  # Stop: the member's run ends with the Director's
            if log is not None:
                log.end(RunStatus.cancelled, error="The run was stopped.")
            raise
        except BaseException as error:  # whatever ended it, the member's run does not stay `running`
            if log is not None:
                log.end(RunStatus.failed, error=f"{type(error).__name__}: {error}"[:500])
            raise
        self._unfit(agent, fallback)
        ms = round((time.perf_counter() - started) * 1000)
        self.steps.record(
            step_key("answer", key), {"output": output.model_dump(mode="json"), "fallback": fallback, "ms": ms}
        )
        self.memo.save()
        if log is not None:
            log.end(RunStatus.finished, output=output.model_dump_json())
        crash_point(f"modeling.answer:{key}")
        return output

    async def _typed(
        self, agent: str, mode: Mode, kind: type[TeamAnswer], text: str, prompt: str,
        check: Callable[[TeamAnswer], None] | None,
    ) -> tuple[TeamAnswer, str | None]:  # fmt: skip
        """The model's answer within the Director's tool call (its requests count against the Director's run's usage
        limits), and None; or, when it never fitted its form, the role's empty answer and why (code's words stand in).
        Passing the run's limits is no fallback: ToolError `usage_limit_exceeded` ends the team's work."""
        try:
            got = await typed_answer(
                model=self.model, instructions=text, prompt=prompt, output_type=kind, check=check, retries=1,
                within=self.call,
            )  # fmt: skip
        except ToolError as error:
            if error.error_code == "usage_limit_exceeded":
                raise
            if agent == "validator" and mode.startswith("work"):
                reasons = [f"验证者的回答无法使用（{error.message[:40]}）；代码检查已通过，有条件放行。"]
                return kind.model_validate({"status": "CONDITIONAL", "reasons": reasons}), error.message
            return kind(), error.message
        assert isinstance(got.output, TeamAnswer)
        return got.output, None

    def _unfit(self, agent: str, fallback: str | None) -> None:
        if fallback:
            self.unfit[agent] = fallback
        else:
            self.unfit.pop(agent, None)

    async def consult(
        self, request: ConsultationRequest, *, step: str, phase: str, depth: int, waiting: tuple[str, ...]
    ) -> tuple[Reply, Path] | Refusal:
        """One consultation the Director was asked for: refused with the reason, or made and recorded."""
        n = self._counters[f"{step}|consult"] = self._counters.get(f"{step}|consult", 0) + 1
        key = f"{step}|{request.from_agent}|c{n}"
        known = self.steps.result(step_key("consult", key))
        replied = self.steps.result(step_key("reply", key))
        began = (utcnow(), time.perf_counter())
        if known is not NOT_DONE and known["status"] == "refused":
            return Refusal(known["code"], known["reason"])
        if known is not NOT_DONE and replied is not NOT_DONE:
            return Reply.model_validate(replied), self.ws / "consultation" / known["file"]
        if known is NOT_DONE:
            refusal = self.refusal(request, phase=phase, depth=depth, waiting=waiting)
            if refusal is not None:
                self._ledger(key, request, began, status="refused", error=f"{refusal.code}: {refusal.reason}")
                refused = {"status": "refused", "code": refusal.code, "reason": refusal.reason, **brief(request, phase)}
                self.steps.record(step_key("consult", key), refused)
                self.memo.save()
                return refusal
            index = self.memo["pairs"].get(f"{request.from_agent}_{request.to_agent}", 0) + 1
            file = record_name(request.from_agent, request.to_agent, index)
            known = self.steps.record(
                step_key("consult", key), {"status": "asked", "index": index, "file": file, **brief(request, phase)}
            )  # the number is taken before the colleague is asked: a resumed run keeps it
            self.memo.save()
            crash_point(f"modeling.reserved:{known['file']}")
        before = len(self.member_runs)
        reply = self._directors_reply(request) if request.to_agent == DIRECTOR else await self._colleagues_reply(
            request, key=key, phase=phase, depth=depth, waiting=waiting
        )  # fmt: skip
        path = self.ws / "consultation" / known["file"]
        create_once(path, record_markdown(request, reply, index=known["index"], time=clock()).encode("utf-8"))
        crash_point(f"modeling.record:{path.name}")
        colleague = next((run for agent, run in self.member_runs[before:] if agent == request.to_agent), None)
        self._ledger(key, request, began, status="done", reply=reply, record=path, expert_run_id=colleague)
        self.steps.record(step_key("reply", key), reply.model_dump(mode="json"))
        self.memo.save()  # after the ledger: a run killed between the two finds its row and does not add another
        return reply, path

    async def _colleagues_reply(
        self, request: ConsultationRequest, *, key: str, phase: str, depth: int, waiting: tuple[str, ...]
    ) -> Reply:
        """The consulted colleague's answer (a turn of its own, which may consult in turn), as the seed's reply."""
        answered = typed(Answer, await self.turn(
            request.to_agent, "answer", step=key, phase=phase, depth=depth, waiting=(*waiting, request.from_agent),
            task=f"回答 {request.from_agent} 的咨询。", prompt=request_text(request) + "\n\n" + self._problem_prompt(short=True),
        ))  # fmt: skip
        reply = Reply(
            agent=request.to_agent,
            answer=answered.answer.strip() or f"（{request.to_agent} 没有给出回答。）",
            note=answered.note,
        )
        return reply

    def _directors_reply(self, request: ConsultationRequest) -> Reply:
        """The Director's own answer, from its records only (it is code: it knows the plan, the verdicts so far and
        who on the team knows what, and says so rather than guess at the modeling)."""
        plan = self.memo["notes"].get("plan") or []
        verdicts = [f"{v.gate}#{v.attempt} {v.status}" for _, v in validation_records(self.ws)]
        known = [f"计划：{plan[0]}" if plan else "计划：模型尚未选定", "关卡：" + ("、".join(verdicts) or "尚无结论")]
        return Reply(
            agent=DIRECTOR,
            answer="Director 只能根据团队的记录回答：" + "；".join(known) + "。",
            note=f"模型与方法的问题请咨询 modeler 或 researcher；数据的问题请咨询 data_engineer。{ROLES[request.from_agent].typical}",
        )

    def refusal(
        self, request: ConsultationRequest, *, phase: str, depth: int, waiting: tuple[str, ...]
    ) -> Refusal | None:
        """Why the Director will not make this consultation, or None when it will (see `_consultations.refusal`)."""
        consults = self.memo["consults"].values()
        return refusal(request, consults=consults, config=self.config, phase=phase, depth=depth, waiting=waiting)

    def _ledger(self, key: str, request: ConsultationRequest, began: tuple[str, float], **fields: Any) -> None:
        ledger(self.store, self.call, self.ws, key, request, started=began[0], clock=began[1], **fields)

    def _validator_check(self, answer: TeamAnswer) -> None:
        """A REJECTED verdict must show its evidence (`rejection_shows_evidence`; else the validator is asked again
        with this error; an answer that never fits is CONDITIONAL, see `answer`)."""
        if not isinstance(answer, ValidatorWork) or answer.status != "REJECTED":
            return
        names = {
            p.name
            for folder in ("data", "code", "results", "figures", "paper")
            for p in (self.ws / folder).glob("*")
            if p.is_file()
        }
        if not rejection_shows_evidence(answer.reasons, names):
            raise ValueError(
                "REJECTED needs evidence: name the file that is wrong (one of these, which all exist: "
                + ", ".join(sorted(names)[:12])
                + ") and say what is wrong in it, in a finished sentence; "
                "if nothing is wrong, answer APPROVED, or CONDITIONAL with what to improve."
            )

    # ---- code ---------------------------------------------------------------------------------------------------------

    async def _run_script(self, name: str) -> ScriptRun:
        return await run_in_sandbox(self.ws, name)

    async def _model_code(self, draft: str, plan: Plan, attempt: int) -> None:
        """code/model.py: the code translator's own code when it parses, defines what train.py uses and runs in the
        sandbox; the template otherwise (which one, and why, goes on record)."""
        draft = strip_fence(draft)
        reason = draft_problem(draft, plan)
        if not draft.strip() and "code_translator" in self.unfit:
            reason = f"its answer did not fit its form ({self.unfit['code_translator'][:160]})"
        if reason is None:
            write_atomic(self.ws / "state" / "drafts" / f"model_{attempt}.py", draft.encode("utf-8"))
            self._write_script("model", draft, origin="code_translator")
            ran = await self._run_script("model")
            if ran.ok:
                return
            reason = f"it did not run: {ran.error or ran.stderr[-200:]}"
        self._write_script(
            "model",
            script("model", plan),
            origin=f"template ({plan.kind}); the code translator's draft was set aside: {reason}",
        )
        await self._run_script("model")

    def _write_script(self, name: str, source: str, *, origin: str) -> None:
        write_script(self.ws, self.memo, name, source, origin=origin)

    # ---- prompts ----------------------------------------------------------------------------------------------------

    def _problem_prompt(self, *, short: bool = False) -> str:
        text = self.problem.statement.strip()
        corrected = "".join(f"\n{t.number}. {t.text}" for t in self.problem.tasks or [])  # the person's, on the page
        return (
            f"题目：{self.problem.title}\n"
            + (text[:400] if short else text[:1000])  # a small model reads ~20 tokens a second
            + (f"\n\n要回答的问题（以此为准）：{corrected}" if corrected else "")
        )

    def _data_prompt(self) -> str:
        shape = describe_data(self.ws / "problem")
        return "数据文件：" + "; ".join(
            f"{name}（{shape.rows[name]} 行）：{', '.join(cols)}" for name, cols in shape.tables.items()
        )

    def _results_prompt(self) -> str:
        files = sorted(p.name for p in (self.ws / "results").glob("*") if p.suffix in (".csv", ".json"))
        return "结果文件：" + ", ".join(files)

    def _gate_prompt(self, gate: Gate) -> str:
        listing = []
        for folder in ("data", "code", "results", "figures", "paper"):
            names = sorted(p.name for p in (self.ws / folder).glob("*") if p.is_file() and not p.name.startswith("."))
            if names:
                listing.append(f"{folder}/: {', '.join(names)}")
        tasks = [
            f"第 {m.task.number} 问（{m.task.asks}）：{m.family or '无模型'}，{m.status}" for m in recorded(self.ws)
        ]
        return (
            f"关卡 {gate}。工作区的文件：\n"
            + "\n".join(listing)
            + ("\n各问的模型：\n" + "\n".join(tasks) if tasks else "")
        )

    # ---- records and events -----------------------------------------------------------------------------------------

    def _keep_answer(self, key: str, text: str) -> None:
        if text and self.memo["notes"].get(key) != text:
            self.memo["notes"][key] = text
            self.memo.save()

    def _note(self, key: str, lines: list[str]) -> None:
        if lines and self.memo["notes"].get(key) != lines:
            self.memo["notes"][key] = lines
            self.memo.save()

    def _nested(self, agent: str, prompt: str) -> RunLog | None:
        if self.call is None or self.call.log is None:
            return None
        return self.call.log.nested(agent=agent, app="modeling", prompt=prompt, model=self.model_spec, lang=self.lang)

    def _close_stale_members(self) -> None:
        """A member's run left `running` by a process that was killed while it worked ends `failed` now: this call
        goes on in its place (its answer is asked again; the records it had made are kept)."""
        if self.call is None or self.store is None:
            return
        for run in self.store.list_runs(app="modeling", status=RunStatus.running.value, limit=500):
            if run.parent_run_id == self.call.run_id:
                self.store.set_run_status(
                    run.id,
                    RunStatus.failed,
                    error="The process running it stopped; the resumed run went on without it.",
                )


def typed(kind: type[_Work], answer: TeamAnswer) -> _Work:
    """`answer` as the role's answer it is (its model is made from `kind`, see `_team.output_type`)."""
    if not isinstance(answer, kind):
        raise TypeError(f"expected a {kind.__name__}, got a {type(answer).__name__}")
    return answer


def whole(answer: TeamAnswer, field: str) -> str:
    """The answer's text `field` without a last sentence its bound cut off (see `_compose.whole_sentences`)."""
    info = type(answer).model_fields[field]
    bound = next((m.max_length for m in info.metadata if isinstance(getattr(m, "max_length", None), int)), None)
    text = str(answer.model_dump()[field])
    return whole_sentences(text, bound=bound) if bound else text


def whole_items(answer: TeamAnswer, field: str) -> list[str]:
    """The answer's list `field` (of `Line`s), each item without a last sentence its bound cut off: an item the
    bound stopped before any sentence end is "" (its place kept: a caption's belongs to its figure)."""
    return [whole_sentences(str(item), bound=LINE_LENGTH) for item in answer.model_dump()[field]]


def not_given(items: list[str], given: str) -> list[str]:
    """`items` (the modeler's assumptions) less those that copy a line of what the team was given (`given`: the
    problem's title, a task line, the data files' line), compared without punctuation or spaces (seen on the embedded
    model: "银行窗口的设置", "任务一：估计顾客的到达率与服务率" and the data line listed as the model's assumptions)."""

    def bare(text: str) -> str:
        return re.sub(r"[\W_]+", "", text).lower()

    lines = {bare(line) for line in given.splitlines()} - {""}
    return [item for item in items if bare(item) not in lines]


def _answer(model: TaskModel | None, template: TaskAnswer, workspace: Path, lang: str) -> TaskAnswer:
    """A task's section: its family's results when one ran; else the template model's files when they bear on it;
    else why its family could not."""
    if model is None or (model.status != "ran" and template.answered):
        return template
    return task_answer(model, workspace, lang=lang)


def _files_used(models: list[TaskModel], plan: Plan, *, by_task: bool) -> set[str]:
    """The data files the paper's results come from: those the tasks' families read that ran (`table`, and a second
    year's `next_table`), else the template model's table."""
    if not by_task:
        return {plan.table}
    named = (m.params.get(key) for m in models if m.status == "ran" for key in ("table", "next_table"))
    return {name for name in named if isinstance(name, str) and name}


def _said(answer: TaskAnswer) -> str:
    """A task's section as the writer reads it: the task, then what code says about its results (figures aside)."""
    lines = [line for line in answer.text.split("\n\n") if not line.startswith("![")]
    return f"{answer.task.number}. {answer.task.text}\n" + "\n".join(lines)[:300]


def _task(task: str, reasons: list[str]) -> str:
    if not reasons:
        return task
    return task + "\n上一轮被验证关卡退回，理由：\n" + "\n".join(f"- {r[:300]}" for r in reasons[:6])


def _no_digits(text: str) -> str:
    return "".join(ch for ch in text if not ch.isdigit()).strip()
