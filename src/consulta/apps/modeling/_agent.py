"""The app's one runtime agent, the Director: each turn is one call of `run_team`, made by the runtime itself (the
turn's first look), in which the Director (code, `_director`) runs the team over the problem's workspace to the
paper's PDF; the call's result is the turn's output.

The team's answers are nested runs of the Director's run (one agent at a time), their consultations go into the
store's ledger, and a gate rejected `MAX_ATTEMPTS` times becomes the runtime's `question` to the person (accept the
work, try again, stop), answered from any front end; the answer runs the same call again with the decision, and the
Director replays its recorded steps up to that point.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from ...asks import question_tool
from ...i18n import normalize_lang, t
from ...runtime import EXTERNAL_MODEL_PREFIX, Agent, Choice, ToolDef, ToolError, current_tool_call
from ...sandbox import SandboxUnavailable
from .._def import AppEnv, AppOptions
from ._director import Decision, Director, Escalation, Stopped, TeamConfig
from ._memo import pending_escalation, thread_steps
from ._problem import prepare_workspace, run_workspace
from ._upload import problem_source, runs_folder

__all__ = [
    "AGENT",
    "TEAM_TOOL",
    "ModelingOptions",
    "build_agent",
    "decision_in_words",
    "team_tool",
    "workspace_of_options",
]

AGENT = "director"
TEAM_TOOL = "run_team"
INSTRUCTIONS = """You are the Director of a mathematical-modeling team. Each request is handled by calling \
run_team(request) with the user's words; its result is your reply."""
DECISIONS = ("accept", "retry", "stop")
TEAM_REQUESTS = 400
"""The Director's run's request limit: the team's answers are nested runs within its `run_team` call and count
against it (a whole run makes tens of requests: ~15 answers, their retries and consultations, up to 3 reworks per gate);
passing it ends the team's work with `usage_limit_exceeded`."""


class ModelingOptions(AppOptions):
    """The modeling app's options: the problem, and the bounds of the team's consultations."""

    problem: str | None = Field(
        None,
        description="A folder holding the statement (problem.md, problem.json in benchmark form, or a PDF) and the "
        "data (CSV tables, .xlsx workbooks)",
    )
    max_depth: int = Field(
        2, ge=1, le=5, description="How deep consultations may nest (2: a consulted agent may consult once more)"
    )
    consult_budget: int = Field(2, ge=0, le=20, description="Consultations each agent may make in each phase")


def workspace_of_options(options: ModelingOptions, env: AppEnv) -> Path | None:
    """The folder of the runs' workspaces (`AppDef.data_path`): under the app's data folder, named from the problem
    (a web session's: its own folder, `_upload.runs_folder`); each run works in a workspace of its own in it
    (`run_workspace`, named by the run's conversation)."""
    return runs_folder(options.problem, env)


def team_tool(options: ModelingOptions, env: AppEnv) -> ToolDef:
    """`run_team`: the Director runs the team to the paper (the result's `message` is the turn's output)."""

    async def run_team(request: str = "", decision: str = "") -> dict[str, Any]:
        """Run the modeling team on the problem to a finished paper (PDF)."""
        call = current_tool_call()
        run = env.store.get_run(call.run_id) if call is not None else None
        lang = normalize_lang(run.lang if run is not None else env.lang)
        source = problem_source(options.problem, env)  # the session's uploaded problem, else --problem
        if source is None:
            raise ToolError(
                "no_problem", t("modeling.error.no_problem", lang), hint="consulta chat modeling --problem DIR -p 开始"
            )
        spec = (
            run.model
            if run is not None and run.model and not run.model.startswith(EXTERNAL_MODEL_PREFIX)
            else env.model
        )
        if run is None:
            raise ToolError("no_run", "run_team runs only as a tool of the Director's run.", hint="Start a run.")
        runs = runs_folder(options.problem, env) or source.parent  # (there is one wherever there is a problem)
        workspace = run_workspace(runs, run.thread_id)
        problem = prepare_workspace(workspace, source)
        rerun = decision in DECISIONS  # the runtime's question was answered: this call runs again with the decision
        steps = thread_steps(env.store, run.id)  # the conversation's, as its workspace is
        chosen = decision if rerun else (decision_in_words(request) if pending_escalation(steps) else None)
        director = Director(
            workspace=workspace, problem=problem, model=env.resolve_model(spec), model_spec=spec, store=env.store, call=call,
            config=TeamConfig(max_depth=options.max_depth, budget=options.consult_budget), lang=lang, decision=chosen,  # type: ignore[arg-type]
            steps=steps,
        )  # fmt: skip
        try:
            pdf = await director.run()
        except Escalation as escalation:
            if rerun:  # the runtime asks once per call: a second escalation in it is the turn's reply, answered by the next message
                question = _escalation(escalation, lang)
                labels = " / ".join(question.choice.options if question.choice else DECISIONS)
                message = t("modeling.escalation.again", lang, question=question.message, options=labels)
                return {
                    "ok": True,
                    "message": message,
                    "workspace": str(workspace),
                    "escalation": escalation.verdict.gate,
                }
            raise _escalation(escalation, lang) from None
        except SandboxUnavailable as refused:  # the team's code is never run unconfined: the run says why it stops
            raise ToolError(refused.code, t("modeling.error.sandbox_unavailable", lang), hint=refused.reason) from None
        except Stopped:
            message = t("modeling.done.stopped", lang, workspace=str(workspace))
            return {"ok": True, "message": message, "workspace": str(workspace), "stopped": True}
        counts = director.counts()
        message = t("modeling.done.paper", lang, pdf=str(pdf), **counts)
        return {"ok": True, "message": message, "pdf": str(pdf), "workspace": str(workspace), **counts}

    return ToolDef(
        name=TEAM_TOOL,
        function=run_team,
        description=run_team.__doc__ or "",
        kind="act",
        opens_turn=True,
        ends_turn=True,
    )


_DECISION_WORDS = {
    "accept": ("accept", "接受", "继续"),
    "retry": ("retry", "try again", "再试", "重试"),
    "stop": ("stop", "停止", "终止"),
}


def decision_in_words(words: str) -> Decision | None:
    """The decision a person's message gives at a pending escalation: an option's label in either language, or a
    message that begins with one of its words (accept / retry / stop, 接受 / 再试 / 停止); None when it gives none."""
    text = words.strip().lower()
    for decision in DECISIONS:
        labels = {t(f"modeling.escalation.{decision}", lang).lower() for lang in ("en", "zh-CN")}
        if text in labels or text.startswith(_DECISION_WORDS[decision]):
            return decision  # type: ignore[return-value]
    return None


def _escalation(escalation: Escalation, lang: str) -> ToolError:
    """The runtime's question to the person: the gate, its reasons, and what they may decide."""
    verdict = escalation.verdict
    labels = {d: t(f"modeling.escalation.{d}", lang) for d in DECISIONS}
    reasons = "; ".join(verdict.reasons)[:400]
    values = {"gate": verdict.gate, "attempts": verdict.attempt, "reasons": reasons}
    return ToolError(
        "escalation", t("modeling.escalation.question", lang, **values), field="decision",
        choice=Choice(
            header=t("modeling.escalation.header", lang, **values), question=t("modeling.escalation.question", lang, **values),
            options=list(labels.values()), args_for_option={label: {"decision": d} for d, label in labels.items()},
            header_key="modeling.escalation.header", question_key="modeling.escalation.question", values=values,
        ),
        hint="Ask the person what to do with the question tool.",
    )  # fmt: skip


def build_agent(options: ModelingOptions, env: AppEnv) -> Agent:
    """The Director over `options.problem`."""
    return Agent(
        app="modeling",
        name=AGENT,
        instructions=INSTRUCTIONS,
        tools=(team_tool(options, env), question_tool()),
        first_look=lambda words: [(TEAM_TOOL, {"request": words[:500]})],
        question_timeout=options.question_timeout,
        max_steps=TEAM_REQUESTS,
        options=options.model_dump(mode="json"),
    )
