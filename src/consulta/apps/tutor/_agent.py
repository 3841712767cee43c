"""The tutor's two agents: the orchestrator, which consults the experts and submits an instruction packet, and the
conversational assistant (CA), which talks to the student from that packet."""

from __future__ import annotations

import copy
import functools
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import Field

from ...asks import (
    CONSULT_EXPERT_TOOL_NAME,
    BindingRuleTriggered,
    Consultant,
    ConsultResult,
    RuleBook,
    consult_expert_tool,
)
from ...i18n import catalog, language_name, t
from ...runtime import (
    Agent,
    FactRules,
    ReplyCheck,
    ReplyRefused,
    RunRecord,
    Store,
    ToolChoice,
    ToolDef,
    ToolError,
    TurnFacts,
    all_checks,
    assertions,
    by_first_look,
    current_tool_call,
    echoes,
    model_words,
    reply_lang,
    wrong_language,
)
from .._def import AppEnv, AppOptions, Handover
from ._datasets import say_issues, uploaded_files
from ._experts import ABBREVIATED, EXPERT_IDS, sentences, tutor_experts
from ._packet import (
    SUBMIT_PACKET_TOOL_NAME,
    InstructionPacket,
    standing_consultations,
    standing_inspection,
    submit_packet_tool,
    uninspected_uploads,
)
from ._tasks import Task, TaskCatalog, load_catalog
from ._turns import COURSE_WORDS, CURRENT_TASK, asks_next, first_consultation, shows_work, small_talk, what_is_asked

__all__ = [
    "ASSISTANT",
    "SAY_PACKET_TOOL_NAME",
    "ORCHESTRATOR_AGENT",
    "Findings",
    "TutorOptions",
    "build_agent",
    "build_assistant",
    "ca_agent",
    "ca_request",
    "code_says",
    "follow_up",
    "found_for",
    "packet_brief",
    "packet_reply",
    "reply_language",
    "tutor_facts",
    "uploads_folder",
]

ORCHESTRATOR_AGENT = "orchestrator"
ASSISTANT = "assistant"


class TutorOptions(AppOptions):
    uploads: Path | None = Field(
        None,
        description="The folder of the student's uploaded files (default: uploads in the data dir; a web or MCP "
        "session always has its own)",
    )
    budget_per_task: int = Field(3, ge=1, le=20, description="Expert consultations allowed per task")
    task_id: str | None = Field(None, json_schema_extra={"flag": False})
    """Set by the hand-over for the assistant: the task its reply must not give away."""
    packet: dict[str, Any] | None = Field(None, json_schema_extra={"flag": False})
    """Set by the hand-over for the assistant: the accepted packet its reply must not contradict."""
    student: str | None = Field(None, json_schema_extra={"flag": False})
    """Set by the hand-over for the assistant: the student's words it answers (its reply must not only repeat them)."""
    issues: list[str] = Field(default_factory=list, json_schema_extra={"flag": False})
    """Set by the hand-over for the assistant: the dataset issues code found for the packet's task (as
    `check_dataset` words them), which code's own reply says in the student's language."""
    rules: list[str] = Field(default_factory=list, json_schema_extra={"flag": False})
    """Set by the hand-over for the assistant: the binding rules that fired in the consultations the packet rests on."""
    fits: bool = Field(False, json_schema_extra={"flag": False})
    """Set by the hand-over for the assistant: a standing inspection found the student's file fit for the task."""
    concept: list[str] = Field(default_factory=list, json_schema_extra={"flag": False})
    """Set by the hand-over for the assistant: the concept explainer's checked explanation (its definition, then its
    example), which code's own reply says when the model's cannot be shown."""
    diagnosis: list[str] = Field(default_factory=list, json_schema_extra={"flag": False})
    """Set by the hand-over for the assistant: the error diagnosis of the turn (its root cause, its explanation,
    then the direction of a fix)."""
    validation: list[str] = Field(default_factory=list, json_schema_extra={"flag": False})
    """Set by the hand-over for the assistant: the validation of the student's work in the turn (its details, then
    the recommended action)."""
    no_file: bool = Field(False, json_schema_extra={"flag": False})
    """Set by the hand-over for the assistant: the student has uploaded no file yet (every task works on one)."""
    planned_by_code: bool = Field(False, json_schema_extra={"flag": False})
    """Set by the hand-over for the assistant: the packet was code's own (the orchestrator's first look), so code
    says it too (`code_says`)."""


@dataclass(frozen=True, kw_only=True)
class Findings:
    """What the consultations a packet rests on found, in code's words: the dataset's issues for the packet's task
    and the binding rules that fired. Code's reply says them in the student's language; the packet's
    `mention_to_student` is the model's words, said only when code found nothing and they are in that language and
    meant for the student (`_sayable`)."""

    issues: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    fits: bool = False
    """A standing inspection of the student's file judged it suitable for the packet's task, nothing blocking."""
    concept: tuple[str, ...] = ()
    """The concept explainer's explanation (it passed the expert's check: nothing of the task's answer)."""
    diagnosis: tuple[str, ...] = ()
    """The turn's error diagnosis: its root cause, its explanation, then the direction of a fix."""
    validation: tuple[str, ...] = ()
    """The turn's validation of the student's work: its details, then the recommended action."""
    no_file: bool = False
    """The student has uploaded no file yet: a task not started waits for one (every task works on their data)."""

    def said_by_experts(self, lang: str, *, besides: str = "") -> str:
        """What the experts said (the explanation, the diagnosis, the validation), when it is in `lang` and holds no
        code block (code's reply writes no code), in whole sentences (a small model's text may stop mid-sentence at
        its length limit: the unfinished one is left out), said to the student ("the student's file" → "your file"),
        without a sentence that still names an expert or speaks of the student, or that code's reply says already
        (`besides`)."""
        parts = [_whole_sentences(p) for p in (*self.concept, *self.diagnosis, *self.validation) if "```" not in p]
        # a sentence of the student said to them ("they", "their" only there: "divided by their count" stays), and
        # the one after it that goes on of them ("The student's work is correct. They ran …" → "… You ran …")
        said_to: list[str] = []
        for part in parts:
            of_them = False
            for s in sentences(part):
                of_them, went_on = bool(_OF_THE_STUDENT.search(s)), of_them and bool(_THEY.match(s))
                said_to.append(_second_person(s) if of_them else _THEY.sub(_you, s) if went_on else s)
        kept = [s for s in said_to if not (_INNER_NAMES.search(s) or _OF_THE_STUDENT.search(s) or s in besides)]
        # each sentence in the reply's language (an expert may mix them); an error's own line ("KeyError: 'Age'")
        # is said in either, beside at least one sentence in that language
        in_lang = [s for s in kept if (reply_lang(s, "en") == "zh-CN") == (lang == "zh-CN")]
        if not [s for s in in_lang if not _an_error_line(s)]:
            return ""
        said = [s for s in kept if s in in_lang or _an_error_line(s)]
        # an error's line that a sentence after it quotes is said once ("KeyError: 'age'." then "KeyError: 'age' 的意思是…")
        said = [
            s
            for i, s in enumerate(said)
            if not (_an_error_line(s) and any(s.rstrip(".。") in o for o in said[i + 1 :]))
        ]
        # a sentence said twice (seventeenth set: a diagnosis whose explanation and direction were one sentence)
        said = list(dict.fromkeys(said))
        return ("" if lang == "zh-CN" else " ").join(said)

    def notes(self) -> list[str]:
        """What the experts said, as the assistant's notes (their words, whatever their language: the assistant
        says them in the student's)."""
        lines = []
        if any(self.concept):
            lines.append("The idea, in plain words: " + " ".join(p for p in self.concept if p))
        if any(self.diagnosis):
            lines.append("Why the error happens, and where to look: " + " ".join(p for p in self.diagnosis if p))
        if any(self.validation):
            lines.append("What the check of their work found: " + " ".join(p for p in self.validation if p))
        if self.no_file:
            lines.append("No file is uploaded yet: the task starts once they upload their CSV file.")
        return lines

    @property
    def experts_spoke(self) -> bool:
        """Whether an expert's own words are among the findings (code's reply alone would not say them well)."""
        return any((*self.concept, *self.diagnosis, *self.validation))

    def reasons(self, packet: InstructionPacket, lang: str) -> str:
        said = []
        if self.issues:
            said.append(t("tutor.reply.issues", lang, issues=say_issues(self.issues, lang)))
        # a rule's own sentence, unless the consultation it fired on says why in its own words (eighteenth set: "Show
        # the code you ran and its output" said before the validation of the code and output the student showed)
        said += [
            t(key, lang)
            for r in self.rules
            if (key := f"tutor.rule.{r}") in catalog(lang) and not (r == "evidence_not_enough" and any(self.validation))
        ]
        if said:
            return ("" if lang == "zh-CN" else " ").join(said)
        return " ".join(m for m in packet.mention_to_student if _sayable(m, lang))


def _sayable(mention: str, lang: str) -> bool:
    """Whether code's reply may say the model's `mention` line: in `lang`, naming no expert or step of the
    orchestrator's, not of "the student" (seen: "Consult an expert to explain the how parameter of merge" said to the
    student when the explainer had failed)."""
    in_lang = (reply_lang(mention, "en") == "zh-CN") == (lang == "zh-CN")
    return in_lang and not _INNER_NAMES.search(mention) and not _OF_THE_STUDENT.search(mention)


ORCHESTRATOR = """You plan a pandas tutoring session; you never talk to the student yourself. Tasks:
{tasks}
The student's uploaded files: {files}.
For the student's message: consult an expert when it helps (a new dataset: data_inspector, suitability_judgment, \
scenario dataset_suitability_check; a confusing concept: concept_explainer, concept_explanation, scenario \
concept_clarification; an error: data_inspector, error_diagnosis, scenario error_diagnosis; a claim that a task is done: \
data_inspector, validation_report, scenario progress_validation). Always give reasoning. Then call \
submit_instruction_packet with guidance_for_ca for the assistant who talks to the student, carrying every \
instruction update the consultations returned; the accepted packet ends your turn."""

CA = (
    "You write a friendly pandas tutor's messages to a student. You help only with the course's pandas tasks: to "
    "anything else (an essay, another subject), say so in one sentence and offer help with a task."
)

# The notes go in the request, after the student's words: the embedded 1.5B model ignored them as instructions and
# answered "Can I start?" with "Yes" whatever they said; framed as the reply to write, it mostly follows them.
CA_REQUEST = """The student wrote: "{student}"

Write the tutor's reply to the student from these notes, in {language}, speaking to them as "you". Write no code \
at all (no code block): at most name a method or attribute to look at. End with one guiding question.
Notes:
{notes}"""

_STATUS = {  # without "the student": the small model copied the notes' third person into its reply
    "not_started": "not started yet.",
    "in_progress": "under way, not done yet.",
    "blocked": "NOT YET: it cannot be started yet; say so plainly.",
    "done": "finished.",
}


def packet_brief(packet: InstructionPacket, task: Task | None = None, findings: Findings = Findings()) -> str:
    """The packet (and its task's requirements, and what the experts said) as the plain lines a small model follows;
    JSON it paraphrased away."""
    lines = [f"Task {packet.task_id}: {_STATUS[packet.task_status]}"]
    if task is not None:
        lines.append(f"The task ({task.title}) needs: {task.requirements}.")
    lines.append(f"What to do now: {packet.guidance_for_ca}")
    lines += findings.notes()
    if packet.mention_to_student:
        lines.append("Say: " + " ".join(packet.mention_to_student))
    if packet.blocked_steps:
        # a sentence the student may read as it is (seen: "Do not start: analysis." copied into replies)
        steps = ", ".join(packet.blocked_steps)
        lines.append(f"The {steps} step{'s' if len(packet.blocked_steps) > 1 else ''} cannot start yet.")
    return "\n".join(f"- {line}" for line in lines)


def reply_language(student: str, lang: str) -> str:
    """The language to answer in: the student's (Chinese when they wrote Chinese), else the session's."""
    return language_name(reply_lang(student, lang))


def uploads_folder(options: TutorOptions, env: AppEnv) -> Path:
    """The session's upload folder (made if missing). A session's own (`env.session`: a web or MCP session) is
    `sessions/<sha256 of the session, 32 hex>/uploads` in the app's data dir, whatever `options.uploads` says, so
    no session lists, reads, replaces or has inspected another's file. The machine's own user (terminal, desktop):
    the folder given, else `uploads` in the app's data dir."""
    if env.session is not None:
        key = hashlib.sha256(env.session.encode()).hexdigest()[:32]
        folder = env.data_dir / "sessions" / key / "uploads"
    elif options.uploads is not None:
        folder = options.uploads.expanduser().resolve()
    else:
        folder = env.data_dir / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _recorded(options: TutorOptions, env: AppEnv) -> dict[str, Any]:
    return options.model_copy(update={"uploads": uploads_folder(options, env)}).model_dump(mode="json")


def build_agent(options: TutorOptions, env: AppEnv) -> Agent:
    """The orchestrator over the session's upload folder (options are recorded on each run to rebuild it)."""
    folder = uploads_folder(options, env)
    catalog = load_catalog()
    with resources.as_file(resources.files(__package__).joinpath("data", "binding_rules.yaml")) as rules:
        book = RuleBook.load(rules)
    consultant = Consultant(
        store=env.store,
        experts=tutor_experts(catalog=catalog, uploads=folder, lang=env.lang),
        rules=book,
        resolve_model=env.resolve_model,
        model=env.model,
        budget_per_task=options.budget_per_task,
        ledger_dir=folder.parent / "consultations",
        lang=env.lang,
    )
    tasks = "\n".join(f"- {t.id}: {t.title} ({t.requirements})" for t in catalog.tasks)

    def instructions(run: RunRecord) -> str:  # the files uploaded by the time the run is taken up
        return ORCHESTRATOR.format(tasks=tasks, files=", ".join(uploaded_files(folder)) or "none yet")

    return Agent(
        app="tutor",
        name=ORCHESTRATOR_AGENT,
        instructions=instructions,
        tools=(
            # a concept question or a request for the solution opens with the explainer's consultation
            replace(
                on_current_task(
                    _context_from_catalog(
                        _standing_inspections(
                            _validates_shown_work(consult_expert_tool(consultant), env.store), env.store, folder
                        ),
                        catalog,
                    ),
                    env.store,
                    catalog,
                ),
                opens_turn=True,
            ),
            on_current_task(
                submit_packet_tool(env.store, uploads=folder, inspect=consultant.consult), env.store, catalog
            ),
        ),
        first_look=first_consultation(catalog, folder),
        tool_choice=_plan_steps(env.store, folder),
        question_timeout=options.question_timeout,
        options=_recorded(options, env),
    )


def current_task(store: Store, run_id: str, catalog: TaskCatalog) -> tuple[str, str]:
    """(task id, status) of the session's current task: the task of the thread's latest consultation before this run
    (done when that was a valid validation of the work, else under way), else the catalog's first task, not
    started."""
    run = store.get_run(run_id)
    for c in store.list_consultations(thread_id=run.thread_id, limit=200):  # newest first
        task_id = str((c.request.get("context") or {}).get("task_id"))
        if c.run_id == run_id or catalog.get(task_id) is None:
            continue
        valid = c.request.get("expected_output_type") == "validation_report" and (c.expert_output or {}).get("is_valid")
        return task_id, "done" if valid else "in_progress"
    return catalog.tasks[0].id, "not_started"


def on_current_task(tool: ToolDef, store: Store, catalog: TaskCatalog) -> ToolDef:
    """`tool` (the packet, or `consult_expert`) whose code-made requests for a turn that names no task (`CURRENT_TASK`:
    a greeting, a concept question) are made on the session's current task (`current_task`); a packet's status
    is then that task's."""

    async def on_current(**arguments: Any) -> Any:
        call, context = current_tool_call(), arguments.get("context")
        in_packet = arguments.get("task_id") == CURRENT_TASK
        in_context = isinstance(context, dict) and context.get("task_id") == CURRENT_TASK
        if call is not None and (in_packet or in_context):
            task_id, status = current_task(store, call.run_id, catalog)
            if in_packet:
                arguments = {**arguments, "task_id": task_id, "task_status": status}
            if in_context:
                arguments = {**arguments, "context": {**context, "task_id": task_id}}
        return await tool.function(**arguments)

    return replace(tool, function=on_current)


_FROM_CATALOG = ("task_requirements", "learning_objectives")
"""What a consultation's context says of its task, which the catalog holds: code fills it in from the task id."""


def _context_from_catalog(tool: ToolDef, catalog: TaskCatalog) -> ToolDef:
    """`consult_expert` whose context the model gives without the task's requirements and objectives, which code
    fills in from the catalog (the consultation's record keeps the seed's whole context). Seen on the embedded model:
    ~190 of a consultation's tokens spent copying the task list's text into the call, ~20 s on 2 cores."""
    schema = copy.deepcopy(tool.parameters or {})
    context = schema.get("$defs", {}).get("ConsultContext", {})
    for name in _FROM_CATALOG:
        context.get("properties", {}).pop(name, None)

    async def consult_expert(**arguments: Any) -> Any:
        context = arguments.get("context")
        task = catalog.get(str(context.get("task_id"))) if isinstance(context, dict) else None
        if isinstance(context, dict) and task is not None:
            known = {"task_requirements": task.requirements, "learning_objectives": task.learning_objectives}
            arguments = {**arguments, "context": {**known, **{k: v for k, v in context.items() if v}}}
        return await tool.function(**arguments)

    return replace(tool, function=consult_expert, parameters=schema)


def _standing_inspections(tool: ToolDef, store: Store, uploads: Path) -> ToolDef:
    """`consult_expert` that answers the inspection of a file for a task from the thread's standing inspection of it
    (the file unchanged since), as that consultation's result: no second consultation of the same file for the same
    task, none counted against the task's budget."""

    async def consult_expert(**arguments: Any) -> Any:
        call = current_tool_call()
        context = arguments.get("context") if isinstance(arguments.get("context"), dict) else {}
        if call is not None and arguments.get("expected_output_type") == "suitability_judgment":
            standing = standing_inspection(
                store,
                call.run_id,
                uploads,
                file_name=str(context.get("file_name")),
                task_id=str(context.get("task_id")),
            )
            if standing is not None:
                return ConsultResult(
                    consultation_id=standing.id,
                    expert_id=standing.expert_id,
                    expert_output=standing.expert_output or {},
                    binding_rules_triggered=[BindingRuleTriggered.model_validate(r) for r in standing.binding_rules],
                    instruction_updates=standing.instruction_updates,
                ).model_dump(mode="json")
        return await tool.function(**arguments)

    return replace(tool, function=consult_expert)


def _validates_shown_work(tool: ToolDef, store: Store) -> ToolDef:
    """`consult_expert` that refuses a `validation_report` when the student's words neither say a task is done nor
    show work (seen on the embedded model: "can I start task_2_4?" was validated, found no evidence, and the
    student was told to show their output before starting). The refusal points the model to what fits."""

    async def consult_expert(**arguments: Any) -> Any:
        call = current_tool_call()
        words = store.get_run(call.run_id).prompt if call is not None else ""
        if arguments.get("expected_output_type") == "validation_report" and not shows_work(words or ""):
            raise ToolError(
                "nothing_to_validate",
                "The student's message does not say a task is done and shows no code or output: there is nothing "
                "to validate.",
                hint="For a question about starting a task with an upload, ask data_inspector for a "
                "suitability_judgment; for anything else, submit the instruction packet.",
            )
        return await tool.function(**arguments)

    return replace(tool, function=consult_expert)


def build_assistant(options: TutorOptions, env: AppEnv) -> Agent:
    """The assistant of a hand-over (its task, if the packet named one, in `options.task_id`); when code planned the
    turn, code says the packet (`code_says`)."""
    task = _task(options.task_id) if options.task_id else None
    packet = InstructionPacket.model_validate(options.packet) if options.packet else None
    findings = Findings(
        issues=tuple(options.issues),
        rules=tuple(options.rules),
        fits=options.fits,
        concept=tuple(options.concept),
        diagnosis=tuple(options.diagnosis),
        validation=tuple(options.validation),
        no_file=options.no_file,
    )
    assistant = ca_agent(
        options=_recorded(options, env), task=task, packet=packet, student=options.student, findings=findings
    )
    if options.planned_by_code and packet is not None:
        return code_says(assistant, env.store, packet=packet, findings=findings, student=options.student or "")
    return assistant


SAY_PACKET_TOOL_NAME = "say_packet"


def code_says(assistant: Agent, store: Store, *, packet: InstructionPacket, findings: Findings, student: str) -> Agent:
    """The assistant of a turn code planned whole (the orchestrator's packet was its first look's: "can I start
    task_2_1 on my file?"): code says the packet to the student (`packet_reply`, in their language) and the run
    makes no model request. Everything the reply rests on is code's (the file's check, the rules), and the model
    only reworded it, often wrongly: at 08c4aaf, of 16 can-I-start and odd-file turns, 10 replies were refused at
    least once (most then replaced by this same text) and 2 were wrong."""

    async def say_packet() -> dict[str, Any]:
        call = current_tool_call()
        lang = store.get_run(call.run_id).lang if call is not None else "en"
        said = reply_lang(student, lang)
        if (kind := small_talk(student)) is not None:  # a greeting, thanks or goodbye: answered, nothing planned
            return {"ok": True, "message": t(f"tutor.reply.{kind}", said)}
        lead = ""
        task = _task(packet.task_id)
        about = (
            t("tutor.reply.objectives", said, task=task.id, title=words.title, objectives=words.learning_objectives)
            if task is not None and (words := task.words_in(said))
            else ""
        )
        if what_is_asked(student) == "solution":  # answered with the idea: the reply says why there is no code
            # the explainer's idea when it gave one, else what the task practises (held-out: the explanation was
            # refused twice, and the reply promised "the idea behind it" and gave none)
            lead = _joined(said, t("tutor.reply.no_solution", said), "" if findings.concept else about)
        elif what_is_asked(student) == "concept" and not findings.concept:
            # the explainer gave nothing that passed its checks: said plainly, with what the task practises (seen:
            # "mean 和 median 到底啥区别" answered only "你正在做 task_2_2，还没有完成。")
            lead = _joined(said, t("tutor.reply.no_explanation", said), about)
        elif asks_next(student):  # what the task is about
            lead = about
        return {"ok": True, "message": _joined(said, lead, packet_reply(packet, said, findings))}

    tool = ToolDef(
        name=SAY_PACKET_TOOL_NAME,
        function=say_packet,
        description="Say the instruction packet to the student in code's words.",
        parameters={"type": "object", "properties": {}},
        opens_turn=True,
        ends_turn=True,
    )
    return replace(assistant, tools=(tool,), first_look=lambda _words: [(SAY_PACKET_TOOL_NAME, {})])


_REFUSED_CONSULTATIONS = 2
"""Refused consultations in a run after which the orchestrator is offered only the packet."""


def _plan_steps(store: Store, uploads: Path) -> ToolChoice:
    """The orchestrator always calls a tool (its turn ends with an accepted packet), and its first call is a
    consultation when an upload has no standing inspection. After that the packet is offered too (held to
    consult_expert alone, the embedded model repeated a refused or unneeded consultation until it was stopped): an
    upload still uninspected is then inspected by the packet tool itself. After two refused consultations only the
    packet is offered: the turn ends with what the run has (seen on the embedded model: an explanation refused again
    and again for giving the answer away, the consultation repeated until the run was stopped, no reply at all)."""

    def choose(run_id: str) -> list[str]:
        calls = store.list_tool_calls(run_id)
        if not calls and uninspected_uploads(store, run_id, uploads):
            return [CONSULT_EXPERT_TOOL_NAME]
        if sum(1 for c in calls if c.tool_name == CONSULT_EXPERT_TOOL_NAME and not c.ok) >= _REFUSED_CONSULTATIONS:
            return [SUBMIT_PACKET_TOOL_NAME]
        return [CONSULT_EXPERT_TOOL_NAME, SUBMIT_PACKET_TOOL_NAME]

    return choose


def ca_agent(
    *,
    options: dict[str, Any],
    task: Task | None = None,
    packet: InstructionPacket | None = None,
    student: str | None = None,
    findings: Findings = Findings(),
) -> Agent:
    """The assistant who talks to the student (what to say comes with each request: see `ca_request`). Its reply is
    checked in code: no code block, nothing of the task's answer; a reply that has either is written again (without
    a packet, twice at most: then the run fails, readably, rather than show the student the solution). A reply that
    contradicts the `packet` it was handed (the student may start a blocked task), or that only says the
    `student`'s words back, is written again; refused again, each of these is replaced by code's reply: the packet
    and what code found (`findings`), in the student's language (`packet_reply`)."""
    return Agent(
        app="tutor",
        name=ASSISTANT,
        instructions=CA,
        tools=(),
        options=options,
        max_steps=3,
        check_reply=all_checks(
            _no_solution(task, packet, findings),
            _follows(packet, findings) if packet is not None else None,
            _names_the_warnings(packet, findings) if packet is not None else None,
            _done_only_when_validated(packet, findings) if packet is not None else None,
            _not_an_echo(student, packet, findings) if student else None,
            _on_course(student) if student else None,
            _no_inner_names(packet, findings),
            _not_the_notes(packet, findings) if packet is not None else None,
            _as_the_tutor(packet, findings),
            _to_the_student(packet, findings),  # last: its correction is shown at once, past the checks above
        ),
        facts=tutor_facts(packet, findings),  # every number, id and date of a reply comes from the notes or the student
    )


_CODE_WORDS = re.compile(r"`[^`\n]*`|\b[A-Za-z_][\w.]*\([^()\n]*\)|\.[A-Za-z_]\w*")
"""Code a reply names (`df.head(5)`, `pd.read_csv(...)`, `.iloc`): pandas' words, not facts of the student's data."""


def tutor_facts(packet: InstructionPacket | None, findings: Findings = Findings()) -> FactRules:
    """What counts as a fact in the assistant's replies: numbers, ids and dates must come from its notes (the
    packet, in its request), the student's words or the task catalogue; code's statement instead of a refused
    reply is the packet's, said to the student in their language (`packet_reply`)."""
    tasks = [f"{t.id}: {t.title} ({t.requirements})" for t in load_catalog().tasks]
    return FactRules(
        declared=lambda: tasks,
        ignore=_CODE_WORDS,
        say_found=(lambda facts: packet_reply(packet, facts.lang, findings)) if packet is not None else None,
    )


def _whole_sentences(text: str) -> str:
    """`text` up to its last finished sentence; a short one-line text with no end mark is whole (an expert's field:
    "The right table has no column named id"), given its full stop; "" when nothing is finished."""
    text = text.strip()
    ends = [m.end() for m in re.finditer(rf"{ABBREVIATED}[.!?](?=\s|$)|[。！？]", text)]
    if ends:
        return text[: ends[-1]]
    if text and len(text) <= _SHORT_FIELD and "\n" not in text and not _CODE_MARKS.search(text):
        return text + ("。" if reply_lang(text, "en") == "zh-CN" else ".")
    return ""


_ERROR_LINE = re.compile(r"[A-Z]\w*(?:Error|Exception|Warning)\b")
"""A sentence that is an error's own line (`KeyError: 'Age'`), the same in every language."""


def _an_error_line(sentence: str) -> bool:
    """Whether `sentence` is an error's line alone, in no language ("KeyError: 'age' 的意思是…" is Chinese)."""
    return bool(_ERROR_LINE.match(sentence)) and reply_lang(sentence, "en") == "en"


_CODE_MARKS = re.compile(r"[=()\[\]{}]")
"""Marks of code (an example such as "merged = pd.merge(a"), which code's reply never says."""
_SHORT_FIELD = 160
"""Characters of a text with no end mark that is still whole: longer, it may have been cut at the model's limit."""


def packet_reply(packet: InstructionPacket, lang: str, findings: Findings = Findings()) -> str:
    """The packet said by code to the student, in `lang`: where the task stands, what code found for them
    (`Findings.reasons`), and one guiding question. An explanation is said alone: the idea asked about, not where
    the task stands nor what the check of a file found (seen on the page: "什么是 groupby？" answered with the upload's
    missing columns first)."""
    if any(findings.concept) and (said := findings.said_by_experts(lang)):
        return _joined(lang, said, t("tutor.reply.next_concept", lang))
    reasons = findings.reasons(packet, lang)
    if packet.task_status == "blocked":
        return t("tutor.blocked_reply", lang, task=packet.task_id, reasons=reasons).strip()
    # an explanation is about the idea asked of, not where the task stands
    status = "" if any(findings.concept) else t(f"tutor.reply.{packet.task_status}", lang, task=packet.task_id)
    # the file fits: said when the task has not started, or is under way and the turn judged only the file (tenth
    # set: "can i use fair_pt.csv for the averge age one?" answered "You are working on task_2_2; it is not done yet.")
    judged_only_the_file = not any((*findings.concept, *findings.diagnosis, *findings.validation))
    fits = (
        ""
        if not findings.fits or packet.blocked_steps
        else t("tutor.reply.fits", lang, task=packet.task_id)
        if packet.task_status == "not_started"
        else t("tutor.reply.fits_under_way", lang, task=packet.task_id)
        if packet.task_status == "in_progress" and judged_only_the_file
        else ""
    )
    if findings.no_file and packet.task_status == "not_started" and not any(findings.concept):
        return _joined(lang, status, reasons, t("tutor.reply.upload_first", lang))  # the step to take: the upload
    said = findings.said_by_experts(lang, besides=reasons)
    ask = t(
        "tutor.reply.next_done"
        if packet.task_status == "done"
        else "tutor.reply.next_concept"
        if any(findings.concept)
        else "tutor.reply.next",
        lang,
    )
    return _joined(lang, fits or status, reasons, said, ask)


def _joined(lang: str, *parts: str) -> str:
    """The parts of a reply that are there, as one text in `lang` (Chinese sentences are not spaced)."""
    return ("" if lang == "zh-CN" else " ").join(part for part in parts if part)


_MAY_START = re.compile(
    r"\byou\s+(?:can|may|could)\s+(?:now\s+|already\s+|go\s+ahead\s+and\s+)?(?:start|begin|proceed|go\s+ahead|work\s+on)"
    r"|\byou\s+(?:can|may|could)\s+(?:now\s+)?(?:use|go\s+on\s+with)\b|^\s*yes\b"
    r"|\b(?:go\s+ahead\s+(?:and\s+)?(?:start|begin)|(?:are|you're)\s+(?:all\s+)?(?:set|ready)\s+to\s+(?:start|begin)|let'?s\s+(?:start|begin|get\s+started))\b"
    r"|可以(?:开始|着手|动手|进行|做|使用|用)|能(?:开始|着手|使用)|开始吧|(?:可以|能)直接开始|^\s*是的|^\s*可以[，,。!！]"
    # an opening "sure" reads as yes (seen: "Sure, I can help you with that." to a request the packet blocks)
    r"|^\s*(?:sure|of\s+course|absolutely|certainly)\b|^\s*当然(?:可以)?"
    # so does praise (seen: "Great! You need to add at least 100 rows …" to a file the check refused)
    r"|^\W*(?:great|perfect|awesome|excellent|good\s+news|looks\s+good)\b|^\s*(?:太好了|很好|没问题)",
    re.IGNORECASE,
)
"""Saying the student may start (English and Chinese), in a sentence that asserts it."""


def _follows(packet: InstructionPacket, findings: Findings) -> ReplyCheck:
    """The assistant's reply holds to the packet: never that the student can start (or use the data for) a task it
    marks blocked, or whose steps it blocks; and it says why, naming something the check found (a column, a count,
    the file) — "You can't start task_2_1 yet. Please provide a dataset that meets the task's requirements." is said
    by code instead, with the reasons."""

    def check(text: str, facts: TurnFacts) -> None:
        if packet.task_status != "blocked" and not packet.blocked_steps:
            return
        blocked = t(
            "tutor.blocked_reply", facts.lang, task=packet.task_id, reasons=findings.reasons(packet, facts.lang)
        ).strip()
        said = next((m.group(0) for s in assertions(text) if (m := _MAY_START.search(s))), None)
        if said is None and (opening := _MAY_START.match(text)):  # "Yes, task_2_2 is blocked…" still opens with yes
            said = opening.group(0).strip()
        if said is not None:
            raise ReplyRefused(
                f'Your reply says "{said}", but task {packet.task_id} is blocked: the student cannot start it yet. '
                "Say so plainly, say why from the notes, and end with one guiding question.",
                replacement=blocked,
            )
        if _misses_the_findings(text, findings, _task(packet.task_id)):
            raise ReplyRefused(
                "Say why the task cannot start, from the notes.", replacement=blocked, check="tutor", at_once=True
            )

    return check


_SAID_DONE = re.compile(
    r"\byou(?:'ve|\s+have)\s+(?:now\s+|already\s+)?(?:finished|completed|done)\b|\byou\s+(?:finished|completed)\b|"
    r"\b(?:the\s+task|task_\d+_\d+|it)\s+is\s+(?:now\s+)?(?:done|complete|completed|finished)\b|"
    r"你(?:已经|已)?(?:完成|做完|搞定|写完)了|(?:任务|这道题|这题|task_\d+_\d+)(?:已经|已)(?:完成|做完)",
    re.IGNORECASE,
)
"""A task said done to the student ("你已经完成了任务_2_3", "You have finished task_2_2")."""


def _done_only_when_validated(packet: InstructionPacket, findings: Findings) -> ReplyCheck:
    """A task is said done only when the packet says so (a validation found the work valid): tenth-set reply "你已经完成了
    任务_2_3，没有报错。" to "我应该算是搞定了吧，跑出来没报错", with no validation at all. Said by code instead."""

    def check(text: str, facts: TurnFacts) -> None:
        if packet.task_status == "done":
            return
        clauses = re.sub(r"[，,；;]", "。", text)  # "你已经完成了任务_2_3，没有报错": the claim, then a negation
        said = next((m.group(0) for s in assertions(clauses) if (m := _SAID_DONE.search(s))), None)
        if said is not None:
            raise ReplyRefused(
                f'Your reply says "{said}", but no validation found the work on {packet.task_id} done.',
                replacement=packet_reply(packet, facts.lang, findings),
                check="tutor",
                at_once=True,
            )

    return check


def _names_the_warnings(packet: InstructionPacket, findings: Findings) -> ReplyCheck:
    """A file fit for the task with data-quality warnings (`dataset_warnings`): the reply names what the check found
    (a column, a count) — "如果有任何空值或重复的行，你需要先清理数据" hedges what code knows (tenth set: 2 empty ages, 3
    duplicate rows), and is said by code instead (`packet_reply`)."""

    def check(text: str, facts: TurnFacts) -> None:
        if packet.task_status == "blocked" or "dataset_warnings" not in findings.rules:
            return
        if _misses_the_findings(text, findings, _task(packet.task_id)):
            raise ReplyRefused(
                "Say what the check of the file found, from the notes.",
                replacement=packet_reply(packet, facts.lang, findings),
                check="tutor",
                at_once=True,
            )

    return check


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*[A-Za-z0-9_]|[A-Za-z]|\d+")


def _misses_the_findings(text: str, findings: Findings, task: Task | None) -> bool:
    """Whether a reply names nothing the dataset check found (a column, a count, the file), when it found something:
    what the task asks of every file (its columns, its rows) counts only when the check found nothing else (a reply
    listing the requirements says nothing of the file: seventeenth set, "… at least 100 rows, columns named 'name',
    'age', and 'city'" for a file whose last line is a note)."""
    found = _concrete(findings.issues)
    asked = {c.casefold() for c in task.dataset.required_columns} | {str(task.dataset.min_rows)} if task else set()
    said = text.casefold()
    return bool(found) and not any(
        re.search(rf"(?<![A-Za-z0-9_]){re.escape(f)}(?![A-Za-z0-9_])", said) for f in (found - asked or found)
    )


def _concrete(issues: Sequence[str]) -> set[str]:
    """What the dataset check's issues name (columns, counts, file names), folded: their words less those of the
    issue messages themselves ("missing column(s): name, city" → {"name", "city"})."""
    return {w.casefold() for issue in issues for w in _WORD.findall(issue)} - _issue_words()


@functools.cache
def _issue_words() -> frozenset[str]:
    """The words of the issue messages themselves (not their placeholders), folded: read once."""
    return frozenset(
        w.casefold()
        for key, text in catalog("en").items()
        if key.startswith("tutor.issue.")
        for w in _WORD.findall(re.sub(r"\{\w+\}", " ", text))
    )


_THEM_ZH = r"(?:(?<=要求|告诉|提醒|鼓励|引导|指导|帮助)|(?<=让|请))(?:他们|他|她)(?=提供|上传|重新|换|去|再|先|把|用|检查|修改|改)"
"""The student as "them", told what to do ("然后要求他们提供一个符合任务要求的数据集", seen on the embedded model: the
assistant's guidance said back in Chinese)."""
_STUDENT_ZH = (
    r"该学生|这位学生|学生(?=可以|需要|应该|还|已经|不能|能|的数据|有|在|正确|成功|使用|用了|计算|上传|运行|写了|做了|完成)"
    r"|(?<=指导|引导|告诉|提醒|帮助|鼓励|如果|不是)学生|(?<=[向对给])学生"
    rf"|{_THEM_ZH}"
)
"""The student spoken of in Chinese ("如果学生有任何问题", seen on the embedded model), one pattern for finding and saying."""
_OF_THE_STUDENT = re.compile(rf"\b(?:the|this|your)\s+students?(?:'s)?\b|{_STUDENT_ZH}", re.I)
_YOU = (
    (re.compile(r"\b(?:the|this)\s+student's\b", re.I), "your"),
    (re.compile(r"\b(?:the|this)\s+student\s+(?:has)\b", re.I), "you have"),
    (re.compile(r"\b(?:the|this)\s+student\s+(?:is)\b", re.I), "you are"),
    (re.compile(r"\b(?:the|this)\s+student\s+(?:was)\b", re.I), "you were"),
    (re.compile(r"\b(?:the|this)\s+student\s+(?:does)\b", re.I), "you do"),
    (re.compile(r"\b(?:the|this)\s+student\s+(\w+?)s\b(?<!ss)", re.I), r"you \1"),
    (re.compile(r"\b(?:the|this)\s+student\b", re.I), "you"),
    (re.compile(_STUDENT_ZH), "你"),
    (re.compile(r"\bthey\b", re.I), "you"),  # the student, said again
    (re.compile(r"\btheir\b", re.I), "your"),
    (re.compile(r"\bthem\b", re.I), "you"),
)


_THEY = re.compile(r"^(They|Their|Theirs)\b(?:\s+(are|were|have|do|don't|did|didn't)\b)?")
"""A sentence going on of whom the one before spoke ("They ran the code …")."""


def _you(match: re.Match[str]) -> str:
    you = {"They": "You", "Their": "Your", "Theirs": "Yours"}[match.group(1)]
    return f"{you} {match.group(2)}" if match.group(2) else you


def _second_person(text: str) -> str:
    """`text` said to the student: "the student's file" → "your file", "该学生需要" → "你需要"."""
    for pattern, you in _YOU:
        text = pattern.sub(you, text)
    return re.sub(r"(^|[.!?]\s+)(you|your)\b", lambda m: m.group(1) + m.group(2).capitalize(), text)


def _to_the_student(packet: InstructionPacket | None, findings: Findings) -> ReplyCheck:
    """The assistant speaks to the student ("you"), never of them ("The student can start task_2_1 once …"). The
    reply is said to them at once: the same words in the second person (no rewrite by the model) — unless those
    still hold words meant for the model, an expert's id, the student's voice or another language than the
    student's (seen on the embedded model: the engine's retry prompt said back): then the model writes again, and
    refused again, the reply is code's (`packet_reply`)."""

    def check(text: str, facts: TurnFacts) -> None:
        said = _OF_THE_STUDENT.search(text)
        if said is None:
            return
        spoken = _second_person(text)
        clean = not (
            re.search(_THEM_ZH, text)  # guidance said back, in other words: the model writes again
            or model_words(spoken, facts)
            or wrong_language(spoken, facts)
            or _INNER_NAMES.search(spoken)
            or _AS_THE_STUDENT.search(spoken)
            or _OF_THE_NOTES.search(spoken)
        )
        if packet is not None and not clean:
            spoken = packet_reply(packet, facts.lang, findings)
        raise ReplyRefused(
            f'Your reply speaks of "{said.group(0)}"; you are talking to the student: say "you". Say what the notes '
            "found (the reason, the warning) and what to do next, and end with one guiding question.",
            replacement=spoken,
            check="tutor",
            at_once=clean,  # the same words said to the student: no rewrite needed (one model request saved)
        )

    return check


_OF_THE_NOTES = re.compile(
    r"\b(?:your|the|these|those|my)\s+(?:notes|instructions)\b|\bsystem\s+prompt\b|笔记|指令|提示词|系统提示", re.I
)
"""The model's notes or instructions spoken of (fourteenth set: "你的笔记中提到的文件和列信息是正确的，但它们是针对你，而不是
学生。请向学生解释这些信息"): words about the turn, not to the student."""
_INNER_NAMES = re.compile(
    "|".join(rf"\b{a}_{b}\b|[\u4e00-\u9fff]+_{b}\b" for a, b in (i.split("_", 1) for i in EXPERT_IDS))
    # the orchestrator's own step said to the student (seen: "Consult an expert to explain the how parameter")
    + r"|\b(?:consult|ask)\s+(?:an?\s+|the\s+)?experts?\b|(?:咨询|请教|询问)(?:一下|一位)?专家"
    # an expert or its output type in words, either language (seen: "你可以先向数据检查员询问一个适合的判断")
    + r"|\bdata\s+inspector\b|\bconcept\s+explainer\b|\bsuitability\s+judge?ment\b"
    + r"|数据(?:检查|检验|审查|检察)(?:员|器|专家)|概念(?:解释|讲解)(?:员|器|专家)|适合(?:性)?的?判断"
    # the assistant itself by the packet's name for it (tenth set: "接下来，CA应该指导你检查合并后的表"), not a state's "CA"
    + r"|\bthe\s+CA\b|\bCA\s+(?:should|will|must|can|needs?\s+to)\b|\bCA\s*(?:应该|应当|会|需要|要|可以|将)",
    re.I,
)
"""An expert's id in a reply (data_inspector), or half of it glued to Chinese (数据_inspector, seen on
the embedded model), or the expert or its output named in words (数据检查员): the app's inner names, not words for
the student."""


_AS_THE_STUDENT = re.compile(
    r"^\W*(?:好的[，,]?\s*老师|老师[，,：:]|(?:ok(?:ay)?|yes|sure),?\s+(?:teacher|sir|miss)\b)"
    r"|^\W*(?:我(?:已经)?(?:完成|做完|写完)了|I(?:'ve|\s+have)\s+(?:already\s+)?(?:completed|finished|done)\b)"
    # the student's promise, in the first person ("我会在下一次任务中再次展示我运行的代码", seen on the model)
    r"|我(?:会|将|再)[^。！？\n]{0,16}(?:我的|我运行的)|\bI(?:'ll|\s+will)\s+(?:show|upload|share|send)\s+(?:you\s+)?my\b"
    # the student's resolve ("我会在下一次任务中再次尝试", seen on the model: claim_bare_zh)
    r"|我(?:会|将)(?:在[^。！？\n]{0,12})?(?:再次|重新)?(?:继续|尝试|试试|努力|改正|完成|提交|展示|上传)"
    r"|\bI(?:'ll|\s+will)\s+(?:try|do\s+it)\s+again\b",
    re.I,
)
"""A reply in the student's voice, to the teacher ("好的，老师。我完成了 task_2_2", seen on the embedded model)."""


def _refused_with_codes_reply(
    find: Callable[[str], str | None], reason: str, packet: InstructionPacket | None, findings: Findings
) -> ReplyCheck:
    """A check refusing a reply in which `find` finds something (`reason` says why, to the model, with what was
    found as `{found}`): written again, then replaced by code's reply (`packet_reply`) where there is a packet."""

    def check(text: str, facts: TurnFacts) -> None:
        if (found := find(text)) is not None:
            raise ReplyRefused(
                reason.format(found=found) + " Say what the notes found and what to do next, and end with one "
                "guiding question.",
                replacement=packet_reply(packet, facts.lang, findings) if packet is not None else None,
                check="tutor",
            )

    return check


def _no_inner_names(packet: InstructionPacket | None, findings: Findings) -> ReplyCheck:
    """The student never reads an expert's id ("你可以先向数据_inspector 询问一下")."""
    return _refused_with_codes_reply(
        lambda text: m.group(0) if (m := _INNER_NAMES.search(text)) else None,
        "Your reply names {found!r}, the app's inner name for an expert the student never meets.",
        packet,
        findings,
    )


_THE_NOTES = re.compile(r"\b(?:these|the|my|your)\s+notes\b|(?:这些|我的)(?:笔记|备注|说明)", re.I)
"""The assistant's notes named: the student has none (their words are the packet's, for the assistant)."""
_WORD_RUN = re.compile(r"[a-z0-9']+|[\u4e00-\u9fff]")
_NOTES_RUN = 8
"""Words (or Chinese characters) in a row a reply shares with the guidance when it says the guidance back; shorter
runs are its content ("a dataset with an age column")."""


def _not_the_notes(packet: InstructionPacket, findings: Findings) -> ReplyCheck:
    """The student never reads the assistant's notes as they are: the packet's guidance is meant for the assistant
    (seen on the embedded model: "To explain the idea you ask about in plain words, from the idea in these notes,
    … you can say: …"). Its words come in the request, the student's turn, so the runtime's own check of words
    meant for the model does not see them: this check holds the reply to them."""

    guidance = _WORD_RUN.findall(packet.guidance_for_ca.casefold())

    def repeated(text: str) -> str | None:
        if said := _THE_NOTES.search(text):
            return said.group(0)
        words = _WORD_RUN.findall(text.casefold())
        run = SequenceMatcher(None, words, guidance, autojunk=False).find_longest_match()
        return " ".join(words[run.a : run.a + run.size]) if run.size >= _NOTES_RUN else None

    return _refused_with_codes_reply(
        repeated,
        "Your reply repeats your notes ({found!r}); they are for you, not the student. Speak to the student: say "
        "what the notes found, in your own words.",
        packet,
        findings,
    )


def _as_the_tutor(packet: InstructionPacket | None, findings: Findings) -> ReplyCheck:
    """The assistant is the tutor: it never answers in the student's voice ("好的，老师。我完成了 …")."""
    return _refused_with_codes_reply(
        lambda text: m.group(0) if (m := _AS_THE_STUDENT.search(text)) else None,
        "Your reply {found!r} speaks as the student; you are the tutor, talking to the student.",
        packet,
        findings,
    )


def _not_an_echo(student: str, packet: InstructionPacket | None, findings: Findings) -> ReplyCheck:
    """A reply that only says the student's words back ("KeyError 是什么意思？" → "KeyError 是什么意思") answers
    nothing."""
    return _refused_with_codes_reply(
        lambda text: text if echoes(text, student) else None,
        "Your reply only repeats the student's words. Answer them from the notes.",
        packet,
        findings,
    )


def _on_course(student: str) -> ReplyCheck:
    """A reply that helps with something else is not given (seen on the embedded model: "你能帮我写一篇关于春天的作文吗？"
    answered with an essay plan): when neither the student's words nor the reply say anything of the course, code's
    reply says what the tutor helps with, at once. Words that touch the course at all are left to the other checks."""

    def check(text: str, facts: TurnFacts) -> None:
        if COURSE_WORDS.search(student) or COURSE_WORDS.search(text):
            return
        raise ReplyRefused(
            "The student asks for something outside the course; say you help with the course's pandas tasks only.",
            replacement=t("tutor.off_course", facts.lang),
            check="tutor",
            at_once=True,
        )

    return check


def _no_solution(task: Task | None, packet: InstructionPacket | None, findings: Findings) -> ReplyCheck:
    """No code block and nothing of the task's answer. Refused again, the reply is code's (`packet_reply`) where
    there is a packet; without one the run fails rather than show the solution."""

    def check(text: str, facts: TurnFacts) -> None:
        reason = None
        if "```" in text:
            reason = "Write no code for the student: no code block. Point them to what to check, and ask one guiding question."
        elif task is not None and (leaked := task.revealed_in(text)):
            reason = f"The reply gives the task's answer away ({leaked}); guide the student with a question instead."
        if reason is not None:
            replacement = packet_reply(packet, facts.lang, findings) if packet is not None else None
            raise ReplyRefused(reason, replacement=replacement, check="tutor")

    return check


def ca_request(packet: dict[str, Any], *, student: str, lang: str, findings: Findings = Findings()) -> str:
    """What the assistant is asked: the student's words and the accepted InstructionPacket (with what the experts
    said), as notes."""
    accepted = InstructionPacket.model_validate(packet)
    brief = packet_brief(accepted, _task(accepted.task_id), findings)
    return CA_REQUEST.format(student=student, language=reply_language(student, lang), notes=brief)


@functools.cache
def _shipped_catalog() -> TaskCatalog:
    """The shipped task catalog, read once, when first needed (the assistant's task and brief look tasks up in it)."""
    return load_catalog()


def _task(task_id: str) -> Task | None:
    return _shipped_catalog().get(task_id)


def follow_up(run: RunRecord, env: AppEnv) -> Handover | None:
    """After the orchestrator's run: the assistant and what it is asked, if a packet was accepted."""
    if (getattr(run, "agent", "") or ORCHESTRATOR_AGENT) != ORCHESTRATOR_AGENT:
        return None  # the assistant's own run ends the turn
    accepted = [
        c
        for c in env.store.list_tool_calls(run.id)
        if c.tool_name == SUBMIT_PACKET_TOOL_NAME and isinstance(c.result, dict) and c.result.get("accepted")
    ]
    if not accepted:
        return None
    packet = accepted[-1].result["packet"]
    findings = found_for(env, run, task_id=str(packet["task_id"]))
    return Handover(
        agent=ASSISTANT,
        prompt=ca_request(packet, student=run.prompt, lang=run.lang, findings=findings),
        lang=reply_lang(run.prompt, run.lang),  # the student's, not that of the request's English frame
        options={
            "task_id": str(packet["task_id"]),
            "packet": packet,
            "student": run.prompt,
            "issues": list(findings.issues),
            "rules": list(findings.rules),
            "fits": findings.fits,
            "concept": list(findings.concept),
            "diagnosis": list(findings.diagnosis),
            "validation": list(findings.validation),
            "no_file": findings.no_file,
            # code planned the turn and has all it rests on (what code found; the experts' words, written in the
            # student's language and to them): code says it, no model request
            "planned_by_code": by_first_look(accepted[-1].tool_call_id)
            and (not findings.experts_spoke or bool(findings.said_by_experts(reply_lang(run.prompt, run.lang)))),
        },
    )


def found_for(env: AppEnv, run: RunRecord, *, task_id: str) -> Findings:
    """What the consultations the orchestrator's packet rests on found for `task_id`: the dataset issues of its
    inspections (blocking first, then warnings) and the binding rules that fired."""
    uploads = run.options.get("uploads")
    issues: list[str] = []
    rules: list[str] = []
    judged: list[bool] = []
    concept: tuple[str, ...] = ()
    diagnosis: tuple[str, ...] = ()
    validation: tuple[str, ...] = ()
    for c in standing_consultations(env.store, run.id, Path(uploads) if uploads else None):
        output = c.expert_output or {}
        context = c.request.get("context") or {}
        kind = c.request.get("expected_output_type")
        if kind == "suitability_judgment" and context.get("task_id") == task_id:
            issues += [str(i) for i in [*output.get("blocking_issues", []), *output.get("warning_issues", [])]]
            judged.append(bool(output.get("is_suitable")) and not output.get("blocking_issues"))
        elif kind == "concept_explanation":
            concept = tuple(str(output.get(k) or "") for k in ("definition", "simple_example"))
        elif kind == "error_diagnosis" and context.get("task_id") == task_id:
            diagnosis = tuple(
                str(output.get(k) or "") for k in ("error_root_cause", "explanation", "suggested_fix_direction")
            )
        elif kind == "validation_report" and context.get("task_id") == task_id:
            validation = tuple(str(output.get(k) or "") for k in ("validation_details", "recommended_action"))
        rules += [str(r.get("rule_name")) for r in c.binding_rules if r.get("rule_name")]
    return Findings(
        issues=tuple(dict.fromkeys(issues)),
        rules=tuple(dict.fromkeys(rules)),
        fits=bool(judged) and all(judged),
        concept=concept,
        diagnosis=diagnosis,
        validation=validation,
        no_file=bool(uploads) and not uploaded_files(Path(uploads)),
    )
