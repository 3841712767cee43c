"""The tutor's experts (seed 000). They act on real files and code; their models only put the findings into words.

- `data_inspector`: opens the student's upload with pandas and checks it against the task in code
  (`suitability_judgment`: the verdict, issues and evidence are the code's); reproduces a student's snippet on their
  data in the sandbox (`error_diagnosis`: the real exception and the real columns); runs the code in a student's
  evidence and judges it (`validation_report`).
- `concept_explainer`: `concept_explanation` that never contains the task's answer (the task's `must_not_reveal`,
  checked in code; a violating explanation is regenerated).
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import keyword
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...asks import (
    ConceptExplanation,
    ConsultRequest,
    ErrorDiagnosis,
    Expert,
    ExpertOutput,
    SuitabilityJudgment,
    ValidationReport,
)
from ...i18n import has_chinese, t
from ...runtime import ToolError
from ...sandbox import Limits, SandboxUnavailable, run_python
from ._datasets import (
    folded,
    issues_for_code,
    judge_upload,
    open_dataset,
    out_of_range,
    say_issues,
    spelled_as,
    unreadable,
    upload_path,
    uploaded_files,
    without_rows_of_no_data,
)
from ._tasks import Task, TaskCatalog

__all__ = ["ABBREVIATED", "EXPERT_IDS", "sentences", "tutor_experts"]

EXPERT_IDS = ("data_inspector", "concept_explainer")
"""The tutor's experts, as the orchestrator names them (never said to the student)."""

_CODE = re.compile(r"\b(df|pd)\b[\w.\[\]'\"()]*\(|\.groupby\(|\.merge\(|read_csv\(")


_USES_PANDAS = re.compile(rf"{_CODE.pattern}|\b(?:df|pd)\s*[\[.]")
"""Code that calls or indexes pandas (`df['age'] + 1` too)."""
_FENCED = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S | re.I)
_INLINE = re.compile(r"`([^`\n]+)`")
_PROSE_LEAD = re.compile(r"^[^\n]*?[:：]\s*(?=\S)")
"""A line's lead-in before its code ("My code: print(…)", "我的代码：print(…)")."""


def student_code(evidence: str) -> str:
    """The code in a student's words, to run (their prose would not: "task_2_4 做完了。我的代码：…" is a SyntaxError):
    their fenced blocks that are code (a block of printed output is not), else the longest run of lines that parses as Python and calls code (a line's lead-in before a
    colon and prose after its last call taken off, lines of one bare word left out), else their inline `code`; ""
    when there is none."""
    fenced = [block.strip() for block in _FENCED.findall(evidence)]
    if fenced:
        # the blocks that are code, not the output they printed ("Code: ``` … ``` Output: ``` (120, 3) … ```"); none
        # parses (broken code pasted to be diagnosed): the first block
        return "\n\n".join([block for block in fenced if _is_code(block)] or fenced[:1])
    lines = [_code_part(line) for line in evidence.splitlines()[:80]]
    best = ""
    for start in range(len(lines)):
        for end in range(len(lines), start, -1):
            block = "\n".join(line for line in lines[start:end] if line is not None)
            if len(block) > len(best) and _USES_PANDAS.search(block) and _parses(block):
                best = block
                break
    if best:
        return best
    return "\n".join(c for c in _INLINE.findall(evidence) if _USES_PANDAS.search(c) and _parses(c))


ABBREVIATED = r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bcf)"
"""Before a full stop that ends no sentence: "e.g.", "i.e.", "vs.", "cf." (pandas' own messages say "(e.g. 'Int64')")."""
_SENTENCE = re.compile(rf".+?(?:{ABBREVIATED}[.!?](?=\s|$|[\u4e00-\u9fff])|[。！？]|$)", re.S)
"""One sentence of an expert's text (a full stop inside code, `df.age.mean()`, or after "e.g", does not end one; one
right before Chinese text does: "… DataFrame.你的代码…", an English sentence glued to a Chinese one)."""


def sentences(text: str) -> list[str]:
    """The sentences of an expert's text, each stripped, in order."""
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


_MAX_FILES_LOADED = 5
"""Uploads loaded for a student's code when no file is named (each is read in the sandbox, within its limits)."""

_MAX_TRIES = 12
"""Starts and ends tried per line: the student's words are untrusted, and each try is a parse."""
_CODE_START = re.compile(r"[A-Za-z_][\w.]*(?=[\[(.])")
_NOT_CODE = re.compile(r"[^\x00-\x7f]|\s+(?:and|but|then|which|it|I)\s+(?:got|get|gave|gives|raised?|says?|printed)\b")
"""Where code written inside a sentence ends: at Chinese text or full-width punctuation, or at "… and got"."""


def _code_part(line: str) -> str | None:
    """The line as code: itself, what follows its lead-in, or the code written inside it ("I ran df['Age'].mean() and
    got KeyError", "我写了 df['age'] + 1，报错"), whichever parses first; None for prose or one bare word."""
    whole_line = [line.rstrip(), _PROSE_LEAD.sub("", line, count=1).rstrip()]
    inside = [line[m.start() :].rstrip() for m in _CODE_START.finditer(line) if _USES_PANDAS.search(line[m.start() :])]
    for index, text in enumerate([*whole_line, *inside[:_MAX_TRIES]]):
        # the text, then up to where prose takes over, then its longest starts that end a call or an index
        cuts = [text, _NOT_CODE.split(text, maxsplit=1)[0].rstrip()]
        cuts += [text[: i + 1] for i in range(len(text) - 1, 0, -1) if text[i] in ")]"][:_MAX_TRIES]
        for candidate in cuts:
            code = candidate.strip()
            if not code or not _is_code(code):
                continue
            if index < len(whole_line) or _USES_PANDAS.search(code):  # code inside a sentence must call code
                return candidate
    return None if line.strip() else ""


def _is_code(code: str) -> bool:
    """Whether `code` parses as Python that does something: not one bare word or literal ("Done", "'age'"), nor a
    value as Python prints it ("(100, 3)", "[38.5, 41.0]": output shown after the code)."""
    body = _parsed(code)
    if not body:
        return False
    if len(body) == 1 and isinstance(body[0], ast.Expr):
        if isinstance(body[0].value, ast.Constant | ast.Name):
            return False
        with contextlib.suppress(ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            ast.literal_eval(body[0].value)
            return False
    return True


def _parses(code: str) -> bool:
    return _parsed(code) is not None


def _parsed(code: str) -> list[ast.stmt] | None:
    """The statements of `code`, or None when it is not Python."""
    try:
        return ast.parse(code).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # untrusted text: nesting too deep is not code
        return None


def _said_error(exception: Any) -> str:
    """An exception the sandbox caught, as one line: `KeyError: 'Age'`."""
    return " ".join(f"{exception.type}: {exception.message}".split())[:200]


def _names_error(text: str, exception: Any) -> bool:
    """Whether `text` names the exception code saw: its type, or what it is about (`'Age'` of `KeyError: 'Age'`)."""
    about = exception.message.strip().strip("\"'")
    return exception.type in text or (0 < len(about) <= 60 and about in text)


def _near_column(exception: Any, columns: list[str]) -> tuple[str, str] | None:
    """For a KeyError of a missing column: the key and the file's column it is nearest to (the same but for case,
    spaces or underscores, else one close spelling), None when there is none."""
    if exception is None or exception.type != "KeyError":
        return None
    return _near_key(exception.message.strip().strip("\"'"), columns)


def _near_key(key: str, columns: list[str]) -> tuple[str, str] | None:
    """The missing column `key` and the file's column it is nearest to (see `_near_column`), or None."""
    if not key or key in columns:
        return None
    same = spelled_as(key, columns)
    close = [same] if same else difflib.get_close_matches(key, columns, n=1, cutoff=0.8)
    return (key, close[0]) if close else None


_KEY_ERROR = re.compile(r"KeyError:?\s*['\"]([^'\"\n]{1,80})['\"]")
"""A missing key the student quotes ("KeyError: 'age'")."""


@dataclass(frozen=True)
class _ErrorForm:
    """An error whose message says what went wrong in a form code reads: what it means and where to look, in the
    catalog's words (`tutor.diagnosis.<meaning>`, `tutor.diagnosis.<direction>`) filled with the message's parts."""

    pattern: re.Pattern[str]
    meaning: str
    direction: str
    concepts: tuple[str, ...]


_ERROR_FORMS = (
    _ErrorForm(
        re.compile(r"AttributeError:\s*'(?P<obj>\w+)' object has no attribute '(?P<attr>\w+)'"),
        "no_attribute",
        "check_method",
        ("AttributeError", "methods of a DataFrame and a Series"),
    ),
    _ErrorForm(
        re.compile(r"NameError:\s*name '(?P<name>\w+)' is not defined"), "not_defined", "define_first", ("NameError",)
    ),
    _ErrorForm(
        re.compile(r"FileNotFoundError:.*?(?:No such file or directory|does not exist)\W*'?(?P<path>[^'\n]{1,120})'?"),
        "no_such_file",
        "check_path",
        ("FileNotFoundError", "file paths"),
    ),
    _ErrorForm(
        re.compile(r"TypeError:\s*'(?P<obj>\w+)' object is not callable"),
        "not_callable",
        "brackets",
        ("TypeError", "selecting columns"),
    ),
    _ErrorForm(
        re.compile(r"ValueError:\s*could not convert string to float:\s*'(?P<value>[^'\n]{1,60})'"),
        "not_a_number",
        "find_text_values",
        ("ValueError", "column types"),
    ),
    _ErrorForm(
        re.compile(
            r"TypeError:\s*(?:dtype '(?:str|object)' does not support operation '(?P<op>\w+)'|"
            r"Could not convert .{0,200}? to numeric|unsupported operand type\(s\) for .{1,4}: '(?:str|int|float)' and 'str')"
        ),
        "text_column",
        "check_dtypes",
        ("TypeError", "column types"),
    ),
    _ErrorForm(
        re.compile(r"ParserError:.{0,80}?Expected (?P<expected>\d+) fields? in line (?P<line>\d+), saw (?P<saw>\d+)"),
        "ragged_line",
        "look_at_the_lines",
        ("ParserError", "reading a CSV file"),
    ),
    _ErrorForm(
        re.compile(r"MergeError:\s*No common columns to perform merge on"),
        "no_common_column",
        "compare_columns",
        ("MergeError", "merge keys"),
    ),
)
"""The errors a pandas beginner meets most, besides a missing column (`_KEY_ERROR`)."""


def _columns_named(code: str) -> list[str]:
    """The column names `code` selects by name (`df['x']`, `df[['a', 'b']]`, `df.loc[:, 'x']`), in order, once each;
    empty when it selects none by name (or is not Python): then nothing is known of the columns it works on."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    named: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            for part in ast.walk(node.slice):
                if isinstance(part, ast.Constant) and isinstance(part.value, str) and part.value not in named:
                    named.append(part.value)
    return named


def _strings_of(code: str) -> list[str]:
    """Every string constant of `code` (none when it is not Python)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


_AGGREGATE = re.compile(r"\.(mean|median|sum|max|min|mode|std|var|count|nunique)\s*\(")


def _aggregates(code: str) -> set[str]:
    """The aggregations `code` calls (`.mean()`, `.median()`, …)."""
    return set(_AGGREGATE.findall(code))


_NOT_DEFINED = re.compile(r"name '(\w+)' is not defined")


def _undefined_name(exception: Any, code: str) -> str | None:
    """The name a NameError says is not defined, when the student's code never gives it a value: their code is part
    of a longer program (its tables read under names of their own), which the sandbox cannot run as it is (eleventh
    set: `roster.merge(countries)` on club_roster.csv and countries.csv)."""
    if exception is None or exception.type != "NameError":
        return None
    found = _NOT_DEFINED.search(str(exception.message))
    name = found.group(1) if found is not None else None
    given = name is not None and re.search(
        rf"(?m)^\s*(?:\w+\s*,\s*)*{name}\s*(?:,\s*\w+\s*)*=(?!=)|\bimport\b.*\b{name}\b|\b(?:for|as)\s+{name}\b", code
    )
    return None if given else name


def _error_form(text: str) -> tuple[_ErrorForm, re.Match[str]] | None:
    """The first known error form `text` quotes, with its match."""
    return next(((f, m) for f in _ERROR_FORMS if (m := f.pattern.search(text)) is not None), None)


def _echoes(text: str, words: str) -> bool:
    """Whether `text` only says `words` again (the student's request given back as its own explanation), or a part of
    them (fourteenth set: "当前任务背后的思路，不写代码。" of the question "请用平实的中文讲清楚当前任务背后的思路，不写代码。")."""
    said, asked = re.sub(r"\W+", "", text.casefold()), re.sub(r"\W+", "", words.casefold())
    return len(asked) >= 6 and (
        said == asked or (len(said) >= 6 and said in asked) or difflib.SequenceMatcher(None, said, asked).ratio() > 0.8
    )


def _texts(output: ExpertOutput) -> str:
    return "\n".join(str(v) for v in output.model_dump().values())


def tutor_experts(*, catalog: TaskCatalog, uploads: Path, limits: Limits = Limits(), lang: str = "en") -> list[Expert]:
    """The experts of one tutoring session, whose student's files are in `uploads` (what code writes of their
    answers is in the session's `lang`)."""

    def run_students(code: str, request: ConsultRequest, *, files: list[Path] | None = None) -> Any:
        """The student's code run in the sandbox on their files (or on `files`, copies of them), as their code expects
        them: pandas as `pd`, the file the request names (or the only one) as `df`, and, with no file named, each
        upload as a DataFrame named after it (`people`, `cities`: seen, `pd.merge(people, cities, …)` reproduced as a
        NameError of `pd`)."""
        files = files if files is not None else students_files(request)
        lines = ["import pandas as pd"]
        for file in files:
            reader = "read_excel" if file.name.lower().endswith((".xlsx", ".xls")) else "read_csv"
            stem = file.stem
            if stem.isidentifier() and not keyword.iskeyword(stem) and stem not in {"pd", "df"}:
                lines.append(f"{stem} = pd.{reader}({file.name!r})")
            if len(files) == 1:
                lines.append(f"df = pd.{reader}({file.name!r})")
        return run_python(code, files=files, prelude="\n".join(lines) + "\n", limits=limits)

    def students_files(request: ConsultRequest) -> list[Path]:
        """The file the request names, else each upload (as many as are loaded)."""
        path = the_file(request)
        return [path] if path else [upload_path(uploads, n) for n in uploaded_files(uploads)[:_MAX_FILES_LOADED]]

    def _counting_no_data(code: str, request: ConsultRequest, printed: str) -> dict[str, Any]:
        """`counts_no_data` (the file, its lines that are no data, the first one's label) when the student's code
        prints otherwise on their files without their rows that sum the table or hold a note (eighteenth set: a
        mean of 96.3 over a "Total,6308" line, passed as done); else nothing."""
        files = students_files(request)
        with tempfile.TemporaryDirectory() as folder:
            copies = {f: without_rows_of_no_data(f, Path(folder)) for f in files}
            cleaned = {f: c for f, c in copies.items() if c is not None}
            if not cleaned:
                return {}
            try:
                again = run_students(code, request, files=[cleaned[f][0] if f in cleaned else f for f in files])
            except SandboxUnavailable:
                return {}
        if not again.ok or " ".join((again.stdout or "").split()) == " ".join(printed.split()):
            return {}
        file, (_, lines, label) = next(iter(cleaned.items()))
        return {"counts_no_data": (file.name, ", ".join(map(str, lines)), label)}

    def prepare_data(request: ConsultRequest) -> ConsultRequest:
        """With one upload and no file named, the file is that upload (there is nothing else it could mean)."""
        present = uploaded_files(uploads)
        if request.context.file_name or len(present) != 1:
            return request
        return request.model_copy(update={"context": request.context.model_copy(update={"file_name": present[0]})})

    def the_file(request: ConsultRequest) -> Path | None:
        name = request.context.file_name
        return upload_path(uploads, name) if name else None

    def inspect_data(request: ConsultRequest) -> dict[str, Any]:
        task = catalog.task(request.context.task_id)
        match request.expected_output_type:
            case "suitability_judgment":
                try:
                    path = upload_path(uploads, request.context.file_name)
                except ToolError as error:
                    if error.error_code != "unsupported_file_type":
                        raise
                    # a file of the student's the course cannot read is a file that does not fit: said, not refused
                    # (held-out: digits.csv.gz refused again and again, the turn ended with no reply)
                    return {
                        "task": task.requirements,
                        "dataset": None,
                        "verdict": unreadable(request.context.file_name),
                    }
                facts, verdict = judge_upload(path, task.dataset)
                return {"task": task.requirements, "dataset": facts, "verdict": verdict}
            case "error_diagnosis":
                quoted_alone = {"reproduced": False, "no_data": True, "quoted": request.context.error_message or ""}
                try:
                    path = the_file(request)
                    columns = [str(c) for c in open_dataset(path).columns] if path else []
                except ToolError as error:
                    if error.error_code not in ("unsupported_file_type", "unreadable_file"):
                        raise
                    # a file the course cannot read is nothing to run the code on: the error is diagnosed as quoted
                    # (tenth set: a ParserError reading Norris.dat refused as the file's type, and not diagnosed)
                    return quoted_alone
                if path is None and not uploaded_files(uploads):  # nothing of theirs to run it on: the quoted error
                    return quoted_alone
                found = _reading_issues(request, task)
                given = request.context.student_code_snippet or ""
                snippet = student_code(given) or given  # the code of it, when prose came with it
                if not snippet.strip():  # the error alone, no code to run
                    quoted = request.context.error_message or ""
                    return {"reproduced": False, "no_code": True, "quoted": quoted, "columns": columns, **found}
                try:
                    ran = run_students(snippet, request)
                except SandboxUnavailable as refused:  # the code is not run unconfined: the expert says so
                    return {"reproduced": False, "not_run": refused.reason, "columns": columns, **found}
                quoted = request.context.error_message or ""
                if (name := _undefined_name(ran.exception, snippet)) is not None and "NameError" not in quoted:
                    # it stopped at a name their code does not define: not the error they quoted (eleventh set:
                    # "people.merge(cities)" reproduced as NameError 'cities', the student's MergeError not explained)
                    return {"reproduced": False, "not_reproduced": name, "quoted": quoted, "columns": columns, **found}
                return {
                    "reproduced": ran.exception is not None,
                    "exception": ran.exception,
                    "stdout": ran.stdout,
                    "columns": columns,
                    **found,
                }
            case _:
                code = student_code(request.context.student_evidence or "")
                facts: dict[str, Any] = {"objectives": task.learning_objectives, "evidence_has_code": bool(code)}
                if code:
                    facts["code"] = code
                    try:
                        ran = run_students(code, request)
                    except SandboxUnavailable as refused:
                        facts.update(ran=False, not_run=refused.reason)
                        return facts
                    facts.update(ran=ran.ok, exception=ran.exception, stdout=ran.stdout)
                    if ran.ok and (ran.stdout or "").strip():
                        facts.update(_counting_no_data(code, request, ran.stdout))
                        facts.update(_reading_issues(request, task))
                return facts

    def _reading_issues(request: ConsultRequest, task: Task) -> dict[str, Any]:
        """What the check of the files the student's code reads (`students_files`) finds against `task` that bears on
        code (`issues_for_code`), as facts: an error on a file written with ';' or a header ' age' is diagnosed with
        it (the turn's packet rests on the diagnosis: the turn is about the error, the files are not judged); a result
        over ages no person has is not validated."""
        paths = students_files(request)
        issues = [issue for p in paths for issue in issues_for_code(judge_upload(p, task.dataset)[1])]
        return {"file_issues": list(dict.fromkeys(issues))} if issues else {}

    def answer_data(request: ConsultRequest, facts: dict[str, Any]) -> ExpertOutput | None:
        """A suitability judgment is code's whole: the checks' verdict and the step that follows from it (the model
        wrote only that step, a sentence code can say). So is the validation of work whose code ran clean in the
        sandbox, printed, and holds the task's own solution (its `must_not_reveal`): the work is done, in the way
        the task asks. Any other validation is the model's to judge."""
        if request.expected_output_type == "validation_report":
            return _validated_by_code(request, facts)
        if request.expected_output_type == "error_diagnosis":
            return _missing_key_quoted(facts)
        if request.expected_output_type != "suitability_judgment":
            return None
        verdict, task = facts["verdict"], request.context.task_id
        if verdict.blocking_issues:
            step = t("tutor.next_step.blocked", lang, task=task, issues=say_issues(verdict.blocking_issues, lang))
        else:
            step = t("tutor.next_step.fits", lang, task=task)
            if verdict.warning_issues:
                step += t("tutor.next_step.mention", lang, issues=say_issues(verdict.warning_issues, lang))
        return SuitabilityJudgment(**verdict.model_dump(), recommended_next_step=step)

    def _validated_by_code(request: ConsultRequest, facts: dict[str, Any]) -> ValidationReport | None:
        """Code's validation when code knows it whole: no code in the evidence, or code that raised when run (not
        valid: what is missing is said by code), or code that ran clean, printed and holds the task's solution."""
        task_id = request.context.task_id
        if not facts.get("evidence_has_code"):
            return ValidationReport(
                is_valid=False,
                validation_details=t("tutor.validation.no_code", lang, task=task_id),
                missing_elements=["code or output that shows it"],
                recommended_action=t("tutor.rule.evidence_not_enough", lang),
            )
        if (name := _undefined_name(facts.get("exception"), str(facts.get("code") or ""))) is not None:
            return ValidationReport(
                is_valid=False,
                validation_details=t("tutor.validation.undefined", lang, task=task_id, name=name),
                missing_elements=["the whole code, from reading the files"],
                recommended_action=t("tutor.validation.show_whole", lang),
            )
        if (raised := facts.get("exception")) is not None:
            return ValidationReport(
                is_valid=False,
                validation_details=t("tutor.validation.raised", lang, task=task_id, error=_said_error(raised)),
                missing_elements=["code that runs without error"],
                recommended_action=t("tutor.validation.fix_first", lang),
            )
        output = str(facts.get("stdout") or "").strip()
        evidence = request.context.student_evidence or ""
        shown = _shown_after_code(evidence)  # once: finding the code in the words parses many of their runs
        if facts.get("ran") is True and not output and not _shows_output(evidence, shown):
            # seventeenth set: "it printed the right averages … I didn't copy them" of code that prints nothing,
            # passed as done: the task counts as done on the code and what it prints
            return ValidationReport(
                is_valid=False,
                validation_details=t("tutor.validation.no_output", lang, task=task_id),
                missing_elements=["the output the code prints"],
                recommended_action=t("tutor.validation.print_it", lang),
            )
        if facts.get("ran") is not True or facts.get("exception") is not None or not output:
            return None
        task = catalog.task(request.context.task_id)
        if (counted := facts.get("counts_no_data")) is not None:
            file_name, lines, label = counted
            return ValidationReport(
                is_valid=False,
                validation_details=t(
                    "tutor.validation.counts_no_data", lang, task=task.id, file=file_name, lines=lines, label=label
                ),
                missing_elements=["a result over the rows of data only"],
                recommended_action=t("tutor.validation.drop_no_data", lang, lines=lines),
            )
        named = _strings_of(str(facts.get("code") or ""))
        impossible = [i for column, i in out_of_range(facts.get("file_issues") or ()) if column in named]
        if impossible:
            # eighteenth set: birth years put in the age column, a mean age of 735 per city passed as done
            return ValidationReport(
                is_valid=False,
                validation_details=t(
                    "tutor.validation.impossible_values", lang, task=task.id, issue=say_issues(impossible[:1], lang)
                ),
                missing_elements=["a result over values the column can hold"],
                recommended_action=t("tutor.validation.fix_values", lang),
            )
        claimed = _claimed_outputs(evidence)  # "output: 71.5" may be read as code
        if claimed and not any(_printed(number, output) for number in claimed):
            # held-out: "output: 71.5" where the code printed 74.23 on the student's file was passed as done
            return _output_differs(task.id, claimed[0], " ".join(output.split())[:200])
        if (differs := _differing_pair(shown, output)) is not None:
            # sixteenth set: hand-copied means, two cities' values swapped, passed as done
            label, shown, ran = differs
            return _output_differs(task.id, f"{label} {shown}", f"{label} {ran}")
        if (other := _differing_line(shown, output)) is not None:
            # seventeenth set: ">>> (118, 7)" shown for a merge whose print(m.shape) gave (110, 7)
            return _output_differs(task.id, *other)
        code = str(facts.get("code") or "")
        method = task.revealed_in(code)
        if method is None:
            asked, called = _aggregates(" ".join(task.must_not_reveal)), _aggregates(code)
            if asked and called and not asked & called:
                # eighteenth set: "平均年龄算出来了 是43.5岁" of `df["age"].median()`, passed as done
                return ValidationReport(
                    is_valid=False,
                    validation_details=t(
                        "tutor.validation.other_aggregate",
                        lang,
                        task=task.id,
                        asked=", ".join(sorted(asked)),
                        called=", ".join(sorted(called)),
                    ),
                    missing_elements=[f"the {', '.join(sorted(asked))} the task asks for"],
                    recommended_action=t("tutor.validation.use_aggregate", lang, asked=", ".join(sorted(asked))),
                )
            used = _columns_named(code)
            wanted = task.dataset.required_columns
            # a column named in a string of its own counts too (eighteenth set: `key = "city"` then `on=key`)
            said = {folded(u) for u in [*used, *named]}
            if used and wanted and not {folded(c) for c in wanted} & said:
                # held-out: `df['motivation'].mean()` on a file with no age column was passed as the average age done
                return ValidationReport(
                    is_valid=False,
                    validation_details=t(
                        "tutor.validation.other_columns",
                        lang,
                        task=task.id,
                        columns=", ".join(wanted),
                        used=", ".join(used[:5]),
                    ),
                    missing_elements=[f"code working on the column(s) {', '.join(wanted)}"],
                    recommended_action=t("tutor.validation.use_task_columns", lang, columns=", ".join(wanted)),
                )
            return None
        return ValidationReport(
            is_valid=True,
            validation_details=t(
                "tutor.validated.details", lang, task=task.id, method=method, output=" ".join(output.split())[:200]
            ),
            missing_elements=[],
            recommended_action=t("tutor.validated.next", lang, task=task.id),
        )

    def _output_differs(task_id: str, claimed: str, printed: str) -> ValidationReport:
        """Not valid: the output the student shows is not what their code printed on their file."""
        return ValidationReport(
            is_valid=False,
            validation_details=t(
                "tutor.validation.output_differs", lang, task=task_id, claimed=claimed, printed=printed
            ),
            missing_elements=["the output the code prints"],
            recommended_action=t("tutor.validation.show_output", lang),
        )

    def _said_meaning(form: _ErrorForm, match: re.Match[str]) -> tuple[str, str]:
        """What an error of a known form means and where to look, in the student's language."""
        parts = {k: v or "?" for k, v in match.groupdict().items()}
        return t(f"tutor.diagnosis.{form.meaning}", lang, **parts), t(
            f"tutor.diagnosis.{form.direction}", lang, **parts
        )

    def _missing_key_quoted(facts: dict[str, Any]) -> ErrorDiagnosis | None:
        """Code's diagnosis of an error the student quotes when there is no file of theirs to run the code on (seen:
        `df['age'].mean()` run on nothing, "diagnosed" as the NameError of `df`): a KeyError's missing column, or
        what an error of a known form (`_ERROR_FORMS`) means, and where to look — in the student's language (seen:
        a Chinese student's AttributeError explained by the model in English only, so nothing of it was said)."""
        not_run = facts.get("no_data") or facts.get("no_code") or facts.get("not_reproduced")
        quoted = str(facts.get("quoted") or "") if not_run else ""
        key = _KEY_ERROR.search(quoted)
        if key is None:
            if (found := _error_form(quoted)) is None:
                return None
            form, match = found
            meaning, direction = _said_meaning(form, match)
            return ErrorDiagnosis(
                error_root_cause=" ".join(match.group(0).split())[:200],
                explanation=meaning,
                suggested_fix_direction=direction,
                related_concepts=list(form.concepts),
            )
        missing = key.group(1)
        near = _near_key(missing, facts.get("columns") or [])
        return ErrorDiagnosis(
            error_root_cause=key.group(0),
            explanation=t("tutor.diagnosis.key_error", lang, column=missing),
            suggested_fix_direction=t("tutor.diagnosis.near_column", lang, missing=near[0], column=near[1])
            if near
            else t("tutor.diagnosis.check_columns", lang),
            related_concepts=["KeyError", "DataFrame.columns"],
        )

    def given_data(request: ConsultRequest, facts: dict[str, Any]) -> dict[str, Any]:
        """What code says of an error it reproduced: the explanation is what running the code raised, and where
        the missing key is a column spelled another way, the direction points to it; of an error it could not run
        (no file of theirs), that the code was not run. The model writes the rest."""
        if request.expected_output_type == "error_diagnosis" and facts.get("no_data"):
            return {"explanation": t("tutor.diagnosis.not_run", lang)}
        if request.expected_output_type == "error_diagnosis" and facts.get("no_code"):
            return {"explanation": t("tutor.diagnosis.no_code", lang)}
        if request.expected_output_type == "error_diagnosis" and (name := facts.get("not_reproduced")):
            return {"explanation": t("tutor.diagnosis.not_reproduced", lang, name=name)}
        exception = facts.get("exception")
        if request.expected_output_type != "error_diagnosis" or exception is None:
            return {}
        given = {"explanation": t("tutor.diagnosis.ran", lang, error=_said_error(exception))}
        if (found := _error_form(_said_error(exception))) is not None:
            meaning, direction = _said_meaning(*found)
            given |= {"explanation": f"{given['explanation']} {meaning}", "suggested_fix_direction": direction}
        if near := _near_column(exception, facts.get("columns") or []):
            given["suggested_fix_direction"] = t("tutor.diagnosis.near_column", lang, missing=near[0], column=near[1])
        return given

    def complete_data(request: ConsultRequest, facts: dict[str, Any], output: ExpertOutput) -> ExpertOutput:
        if isinstance(output, ValidationReport) and facts.get("ran") is False:
            return output.model_copy(update={"is_valid": False})
        exception = facts.get("exception")
        if (
            isinstance(output, ErrorDiagnosis)
            and exception is not None
            and not _names_error(output.error_root_cause, exception)
        ):  # code ran the snippet: the root cause is the exception it raised (the model named none, or another)
            output = output.model_copy(update={"error_root_cause": f"{exception.type}: {exception.message}"})
        if isinstance(output, ErrorDiagnosis) and (task := catalog.task(request.context.task_id)).revealed_in(
            output.explanation + output.suggested_fix_direction
        ):  # the sentences that give the task's answer away are taken out (seen: the model wrote it on every try)

            def kept(text: str) -> str:
                return " ".join(s for s in sentences(text) if task.revealed_in(s) is None)

            output = output.model_copy(
                update={
                    "explanation": kept(output.explanation),
                    "suggested_fix_direction": kept(output.suggested_fix_direction)
                    or t("tutor.diagnosis.direction", lang),
                }
            )
        if isinstance(output, ErrorDiagnosis) and (near := _near_column(exception, facts.get("columns") or [])):
            # code knows where to look: the column the missing key was meant to be (a direction, not the fix)
            key, column = near
            output = output.model_copy(
                update={"suggested_fix_direction": t("tutor.diagnosis.near_column", lang, missing=key, column=column)}
            )
        if isinstance(output, ErrorDiagnosis) and (issues := facts.get("file_issues")):
            found = t("tutor.reply.issues", lang, issues=say_issues(issues, lang))
            if found not in output.explanation:
                output = output.model_copy(update={"explanation": f"{output.explanation} {found}".strip()})
        return output

    def check_data(request: ConsultRequest, facts: dict[str, Any], output: ExpertOutput) -> None:
        if isinstance(output, ErrorDiagnosis):
            task = catalog.task(request.context.task_id)
            if leaked := task.revealed_in(output.suggested_fix_direction + output.explanation):
                raise ValueError(
                    f"The answer contains the solution ({leaked}); give a direction, not the line of code."
                )

    def given_concept(request: ConsultRequest, facts: dict[str, Any]) -> dict[str, Any]:
        """The lists of uses and pitfalls are left empty: the student is told the definition and the example only
        (`Findings`), and each token a small local model does not write is seconds saved on a concept turn."""
        return {"use_cases": [], "common_pitfalls": []}

    def complete_concept(request: ConsultRequest, facts: dict[str, Any], output: ExpertOutput) -> ExpertOutput:
        """The explanation with what gives the task's answer away taken out: the lines (of the definition, the
        example) and the list items that hold it, and an example that only says the request back. A definition that is
        all answer is left for the check to refuse (regenerated: nothing of it remains to explain with)."""
        task = catalog.task(request.context.task_id)
        if not isinstance(output, ConceptExplanation):
            return output
        asked = (request.context.student_confusion or request.question, request.question)
        if output.definition and output.simple_example and any(_echoes(output.simple_example, w) for w in asked):
            # an example that only says the request back is left out; the definition still explains (seen on the
            # embedded model: three tries refused for a parroted example, the student told nothing)
            output = output.model_copy(update={"simple_example": ""})
        if task.revealed_in(_texts(output)) is None:
            return output

        def kept(text: str) -> str:
            return "\n".join(line for line in text.splitlines() if task.revealed_in(line) is None).strip()

        return output.model_copy(
            update={
                # a definition that is all answer stays whole: the check refuses it
                "definition": kept(output.definition) or output.definition,
                "simple_example": kept(output.simple_example),
                "use_cases": [u for u in output.use_cases if task.revealed_in(u) is None],
                "common_pitfalls": [p for p in output.common_pitfalls if task.revealed_in(p) is None],
            }
        )

    def check_concept(request: ConsultRequest, facts: dict[str, Any], output: ExpertOutput) -> None:
        task = catalog.task(request.context.task_id)
        asked = request.context.student_confusion or request.question
        if isinstance(output, ConceptExplanation) and any(
            _echoes(output.definition or output.simple_example, words) for words in (asked, request.question)
        ):
            raise ValueError(
                "The definition repeats the student's words; explain the idea itself in your own plain words."
            )
        chinese = has_chinese(request.context.student_confusion)
        if isinstance(output, ConceptExplanation) and chinese and not has_chinese(output.definition):
            # held-out: an English explanation for a Chinese question; the tutor could say none of it to the student
            raise ValueError(
                "The definition is in English, but the student writes Chinese: write the definition in Chinese "
                "(简体中文), in your own words (定义请用简体中文写)."
            )
        if leaked := task.revealed_in(_texts(output)):
            raise ValueError(
                f"The explanation gives away the task's answer ({leaked}); use an example unrelated to the task."
            )

    def inspect_concept(request: ConsultRequest) -> dict[str, Any]:
        task = catalog.task(request.context.task_id)
        return {
            "task": task.title,
            "learning_objectives": task.learning_objectives,
            "never_write": task.must_not_reveal,
        }

    return [
        Expert(
            expert_id=EXPERT_IDS[0],
            role="You are a data inspector for a pandas course. You say what the checks on a student's data and code "
            'found; your texts are passed to the student as written, so speak to them as "you". Use only the facts '
            "given; never write the student's solution.",
            output_types=("suitability_judgment", "error_diagnosis", "validation_report"),
            prepare=prepare_data,
            inspect=inspect_data,
            answer=answer_data,
            given=given_data,
            complete=complete_data,
            check=check_data,
        ),
        Expert(
            expert_id=EXPERT_IDS[1],
            role='You explain pandas concepts to a student, clearly and briefly, speaking to them as "you", with an '
            "example unrelated to their task; your texts are passed to the student as written. The student is "
            "never shown code: give the example in words, one sentence, with no code.",
            output_types=("concept_explanation",),
            inspect=inspect_concept,
            given=given_concept,
            complete=complete_concept,
            check=check_concept,
        ),
    ]


_CLAIMED = re.compile(
    r"(?:\b(?:output|outputs|printed|prints|result|got|gives|answer)\b|输出|结果|得到|打印)\s*(?:is|was|of)?\s*[:：=]?\s*"
    r"(-?\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


_ALONE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*$", re.M)


_PAIR = re.compile(r"^\s*([^\s\d][^\n]*?)\s+(-?\d+(?:\.\d+)?)\s*$", re.M)
"""A labelled value on a line of printed output ("Changsha     40.9": a group and its mean)."""


def _shown_after_code(words: str) -> str:
    """What the student shows as their code's output: blocks that are not code and the text after the last fenced
    block, or, with no fence, the text after the code their words hold."""
    blocks = list(_FENCED.finditer(words))
    if blocks:
        shown = [block.group(1) for block in blocks if not _is_code(block.group(1).strip())]
        return "\n".join([*shown, words[blocks[-1].end() :]])
    code = student_code(words).strip()
    at = words.find(code) if code else -1
    return words[at + len(code) :] if at >= 0 else ""


def _differing_pair(shown: str, output: str) -> tuple[str, str, str] | None:
    """A labelled value the student shows that the run printed with another value under the same label (sixteenth
    set: a groupby's means copied by hand with two cities' values swapped), as (label, shown, printed); else None."""
    printed = {" ".join(label.split()): value for label, value in _PAIR.findall(output)}
    for label, value in _PAIR.findall(shown):
        ran = printed.get(" ".join(label.split()))
        if ran is not None and not _printed(value, ran):
            return " ".join(label.split()), value, ran
    return None


_VALUES_LINE = re.compile(r"^\s*(?:>>>\s*|Out\[\d*\]:\s*)?([\s(\[{,;:.\d)\]}-]*\d[\s(\[{,;:.\d)\]}-]*)$", re.M)
"""A line of values only, as Python prints a tuple, a list or a number ("(118, 7)", ">>> [3, 4]")."""


def _differing_line(shown: str, output: str) -> tuple[str, str] | None:
    """A line of values the student shows as their output ("(118, 7)") that the run printed, in the same form, with
    other values ("(110, 7)"), as (shown, printed); else None."""

    def form(line: str) -> str:
        return _NUMBER.sub("0", "".join(line.split()))

    def equal(said: str, ran: str) -> bool:  # to the digits the student wrote ("38.5" of 38.50)
        return all(_printed(a, b) for a, b in zip(_NUMBER.findall(said), _NUMBER.findall(ran), strict=True))

    printed = [m.group(1).strip() for m in _VALUES_LINE.finditer(output)]
    for match in _VALUES_LINE.finditer(shown):
        said = match.group(1).strip()
        same_form = [p for p in printed if form(p) == form(said)]
        if same_form and not any(equal(said, p) for p in same_form):
            return said, same_form[0]
    return None


def _shows_output(words: str, shown: str) -> bool:
    """Whether the student's words show what their code printed (`shown`: `_shown_after_code(words)`): a number or a
    line of values after the code, or an output said so ("output: 71.5")."""
    return bool(_claimed_outputs(words) or _ALONE.search(shown) or _VALUES_LINE.search(shown) or _PAIR.search(shown))


def _claimed_outputs(words: str) -> list[str]:
    """The numbers the student's words give as their code's output: said so ("output: 71.5", "输出：28.34"), or
    shown as what was printed — a number alone on a line after their fenced code, or in a block of output
    (fourteenth set: "got this: ```…print(df["age"].sum() / len(df))``` 38.5", where the code printed 40.05)."""
    said = _CLAIMED.findall(words)
    blocks = list(_FENCED.finditer(words))
    if said or not blocks:
        return said
    shown = [block.group(1) for block in blocks if not _is_code(block.group(1).strip())]
    after = words[blocks[-1].end() :]
    return [n for text in (*shown, after) for n in _ALONE.findall(text)]


def _printed(claimed: str, output: str) -> bool:
    """Whether the run's output holds the claimed number, to the digits the student wrote ("28.34" of 28.3389…)."""
    digits = len(claimed.split(".")[1]) if "." in claimed else 0
    return any(round(float(n), digits) == float(claimed) for n in _NUMBER.findall(output))
