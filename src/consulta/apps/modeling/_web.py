"""The modeling app's part of the web page: a live timeline of a run — its phases (the four gates), the
consultations as cards that open to their markdown record, the gates' verdicts with their reasons, the team's script
runs, the files produced (with links) and the paper's PDF — read from the run's workspace, redrawn as the run's
events arrive (static/app.js). An escalation is a `question` of the Director's run: the page's generic ask form
answers it.

Routes (under /api/modeling, for the caller's own runs only: another session's run is a 404 like an unknown one):
`GET /timeline?run_id=` the timeline of a run (the session's newest when none is named); `GET /files/{path}?run_id=`
one file of its workspace, confined to the workspace's output folders (a path that leaves them is a 404).
The session's own problem (`_upload`; no other session reads it): `GET /problem` what a new run works on, with its
tasks; `POST /problem/statement` and `POST /problem/data` one file each (multipart/form-data, part `file`);
`DELETE /problem/data/{name}`; `PUT /problem/tasks` the tasks as the person corrected them; `DELETE /problem`.

(No `from __future__ import annotations`: FastAPI reads the routes' annotations, which name the kit's local types.)
"""

import asyncio
import json
import re
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field

from ...i18n import normalize_lang
from ...runtime import ConsultaError, NotFoundError, RunRecord, ToolError
from .._def import WebKit, WebPart
from .._uploads import receive_file
from ._gates import GATES, MAX_ATTEMPTS, validation_records
from ._problem import MAX_DATA_BYTES, run_workspace
from ._sandbox_run import ScriptRun
from ._upload import (
    FIELD,
    ProblemView,
    TaskEdit,
    UploadRefused,
    clear_problem,
    drop_data,
    problem_view,
    save_data,
    save_statement,
    session_problem,
    set_tasks,
)

__all__ = ["RunTimeline", "read_timeline", "router", "web_part"]

FOLDERS = ("problem", "data", "code", "results", "figures", "paper", "consultation", "validation")
"""The workspace's folders the page may read (its `state/` memo is the flow's own)."""
MEDIA_TYPES = {
    ".md": "text/markdown; charset=utf-8", ".csv": "text/csv; charset=utf-8", ".py": "text/plain; charset=utf-8",
    ".json": "application/json", ".txt": "text/plain; charset=utf-8", ".typ": "text/plain; charset=utf-8",
    ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".svg": "image/svg+xml", ".pdf": "application/pdf",
}  # fmt: skip
_NO_ACTIVE_CONTENT = {
    "Content-Security-Policy": "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox",
    "X-Content-Type-Options": "nosniff",
}
_RECENT_RUNS = 50
_MAX_TEXT = 4000
"""Characters of a record's section the card carries (the whole record is one click away)."""


class FileEntry(BaseModel):
    path: str
    """Relative to the workspace, e.g. `results/forecast.csv`."""
    folder: str
    size: int
    modified: str


class ConsultationCard(BaseModel):
    kind: Literal["consultation"] = "consultation"
    file: str
    from_agent: str
    to_agent: str
    index: int
    time: str
    question: str = ""
    background: str = ""
    reply: str = ""
    outcome: str = ""


class VerdictCard(BaseModel):
    kind: Literal["verdict"] = "verdict"
    file: str
    gate: str
    attempt: int
    status: str
    decided_by: str
    time: str
    reasons: list[str]


class ScriptCard(BaseModel):
    kind: Literal["script"] = "script"
    file: str
    script: str
    ok: bool
    returncode: int
    error: str | None
    outputs: list[str]
    time: str


class Phase(BaseModel):
    gate: str
    state: Literal["approved", "conditional", "accepted", "rejected", "escalated", "stopped", "current", "pending"]
    """`accepted`: rejected `MAX_ATTEMPTS` times and accepted as it was by the person; `escalated`: rejected
    `MAX_ATTEMPTS` times, the person not asked or not answered yet; `stopped`: the person stopped the run there."""
    attempts: int
    status: str | None = None
    """The last verdict's status, if any."""


class RunTimeline(BaseModel):
    run_id: str
    run_status: str
    workspace: str
    """The workspace's name (`<app data dir>/runs/<problem>/<run>`): `<problem>/<run>`."""
    phases: list[Phase]
    cards: list[ConsultationCard | VerdictCard | ScriptCard]
    """Oldest first."""
    files: list[FileEntry]
    paper_pdf: str | None
    """The paper's PDF (a path for GET /files), once rendered."""
    working: str | None = None
    """The team's agent answering now (the newest running nested run of the run), while the run works."""


# ---- reading the workspace ----------------------------------------------------------------------------------------

_TITLE = re.compile(r"^#\s*[^:：]*[:：]\s*(?P<from>\S+)\s*(?:→|->)\s*(?P<to>\S+)\s*#(?P<i>\d+)", re.M)
_ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*([^|]*?)\s*\|\s*$", re.M)
_SECTIONS = {"问题": "question", "背景": "background", "回复": "reply", "结果": "outcome"}


def consultation_card(path: Path, root: Path) -> ConsultationCard | None:
    """The card of a consultation record in the seed's format (title, table, sections), or None if it is not one."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    title = _TITLE.search(text)
    if title is None:
        return None
    rows = {k: v for k, v in _ROW.findall(text)}
    sections: dict[str, str] = {}
    for match in re.finditer(r"^##\s+(\S+)\s*\n(.*?)(?=^##\s|\Z)", text, re.M | re.S):
        key = _SECTIONS.get(match.group(1))
        if key:
            sections[key] = match.group(2).replace("\n---\n", "\n").strip().removesuffix("---").strip()[:_MAX_TEXT]
    return ConsultationCard(
        file=path.relative_to(root).as_posix(),
        from_agent=rows.get("发起方", title.group("from")),
        to_agent=rows.get("接收方", title.group("to")),
        index=int(title.group("i")),
        time=rows.get("时间", "") or _mtime(path),
        **sections,
    )


def _mtime(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")


def _sortable(time: str) -> str:
    """A card's time as a UTC ISO string (records written with a zone or without; unreadable ones sort last)."""
    try:
        stamp = datetime.fromisoformat(time.strip().replace("Z", "+00:00"))
    except ValueError:
        return "9999"
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).astimezone(UTC).isoformat()


def _decisions(root: Path) -> dict[str, str]:
    """The person's decisions at the escalated gates (`gate#round` → accept, retry, stop), from the Director's memo."""
    try:
        memo = json.loads((root / "state" / "director.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    decisions = memo.get("decisions") if isinstance(memo, dict) else None
    return {str(k): str(v) for k, v in decisions.items()} if isinstance(decisions, dict) else {}


def _phases(verdicts: list[Any], decisions: dict[str, str] | None = None) -> list[Phase]:
    phases, current_set, decisions = [], False, decisions or {}
    for gate in GATES:
        mine = [v for v in verdicts if v.gate == gate]
        last = mine[-1] if mine else None
        escalated = last is not None and last.status == "REJECTED" and len(mine) % MAX_ATTEMPTS == 0
        decision = decisions.get(f"{gate}#{len(mine) // MAX_ATTEMPTS}") if escalated else None
        if last is not None and last.status in ("APPROVED", "CONDITIONAL"):
            state = "approved" if last.status == "APPROVED" else "conditional"
        elif decision == "accept":
            state = "accepted"
        elif not current_set:
            current_set = True
            if last is None:
                state = "current"
            elif decision == "stop":
                state = "stopped"
            else:
                state = "escalated" if escalated and decision is None else "rejected"
        else:
            state = "pending"
        phases.append(Phase(gate=gate, state=state, attempts=len(mine), status=last.status if last else None))
    return phases


def read_timeline(workspace: Path, run: RunRecord, working: str | None = None) -> RunTimeline:
    """The timeline of `run` over its workspace: what the records on disk say now."""
    root = workspace.resolve()
    cards: list[Any] = []
    for path in sorted((root / "consultation").glob("*.md")):
        card = consultation_card(path, root)
        if card is not None:
            cards.append(card)
    records = validation_records(root)
    for path, verdict in records:
        cards.append(VerdictCard(
            file=path.relative_to(root).as_posix(), gate=verdict.gate, attempt=verdict.attempt, status=verdict.status,
            decided_by=verdict.decided_by, time=verdict.decided_at, reasons=verdict.reasons,
        ))  # fmt: skip
    for path in sorted((root / "code").glob("*.run.json")):
        try:
            ran = ScriptRun.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        cards.append(
            ScriptCard(
                file=path.relative_to(root).as_posix(),
                script=ran.script,
                ok=ran.ok,
                returncode=ran.returncode,
                error=ran.error,
                outputs=ran.outputs,
                time=ran.finished_at or _mtime(path),
            )
        )
    cards.sort(key=lambda c: _sortable(c.time))
    files = [
        FileEntry(path=p.relative_to(root).as_posix(), folder=folder, size=p.stat().st_size, modified=_mtime(p))
        for folder in FOLDERS
        for p in sorted((root / folder).rglob("*"))
        if _readable(p, root)
    ]
    pdf = root / "paper" / "paper.pdf"
    return RunTimeline(
        run_id=run.id,
        run_status=str(getattr(run.status, "value", run.status)),
        workspace=f"{root.parent.name}/{root.name}",
        phases=_phases([v for _, v in records], _decisions(root)),
        cards=cards,
        files=files,
        paper_pdf="paper/paper.pdf" if pdf.is_file() else None,
        working=working,
    )


def _readable(path: Path, root: Path) -> bool:
    """A file the page may serve: in one of the output folders, not hidden, of a known kind, and the workspace's own:
    no link anywhere on its path (its resolved path is the path itself, inside `root`, the resolved workspace), a
    regular file with no other name (a hard link to a file elsewhere is refused too)."""
    try:
        rel = path.relative_to(root)
        info = path.lstat()
    except (ValueError, OSError):
        return False
    return (
        len(rel.parts) >= 2 and rel.parts[0] in FOLDERS and not any(part.startswith(".") for part in rel.parts)
        and path.suffix.lower() in MEDIA_TYPES and stat.S_ISREG(info.st_mode) and info.st_nlink == 1
        and path.resolve() == path and path.is_relative_to(root)
    )  # fmt: skip


def working_agent(host: Any, run: RunRecord) -> str | None:
    """Who of the team is answering now: the agent of the newest running run nested under `run` (the Director's
    team answers are nested runs; their events are their own runs', not the Director's stream the page follows)."""
    if str(getattr(run.status, "value", run.status)) != "running":
        return None
    nested = host.store.list_runs(principal=run.principal, app=run.app, status="running", limit=_RECENT_RUNS)
    return next((r.agent for r in nested if r.parent_run_id == run.id), None)


def workspace_of(host: Any, run: RunRecord) -> Path | None:
    """The workspace `run` worked in: its own folder (by its conversation) in the app's data path for the options the
    run recorded; never another run's."""
    app = host.app
    if app.data_path is None:
        return None
    try:
        runs = app.data_path(app.recorded_options(run.options), host.for_principal(run.principal).env)
        path = run_workspace(Path(runs), run.thread_id) if runs is not None else None
    except (ConsultaError, ValueError, OSError):
        return None
    return path if path is not None and path.is_dir() and not path.is_symlink() else None


# ---- the routes ---------------------------------------------------------------------------------------------------


def router(kit: WebKit) -> APIRouter:
    """The routes under /api/modeling, with the web front end's host, principal and errors."""
    Host: Any = kit.host  # noqa: N806 - FastAPI dependency annotations
    Principal: Any = kit.principal  # noqa: N806
    ApiError = kit.error  # noqa: N806
    router = kit.api_router("modeling")
    RunId = Annotated[str | None, Query(max_length=64, description="A run of this session; the newest when omitted")]  # noqa: N806

    def _run(host: Any, principal: str, run_id: str | None) -> RunRecord | None:
        if run_id is None:
            recent = [r for r in host.runs(principal=principal, limit=_RECENT_RUNS) if r.parent_run_id is None]
            return recent[0] if recent else None
        try:
            return host.run(run_id, principal=principal)
        except NotFoundError as error:
            raise ApiError(404, "not_found", str(error)) from None

    def _timeline(host: Any, principal: str, run_id: str | None) -> RunTimeline | None:
        run = _run(host, principal, run_id)
        if run is None:
            return None
        workspace = workspace_of(host, run)
        if workspace is None:
            raise ApiError(
                404,
                "no_workspace",
                f"Run {run.id} has no workspace (it was started without a problem).",
                hint="Upload a problem on the page (POST /api/modeling/problem/statement and /data), or start the app "
                "with --problem DIR.",
            )
        return read_timeline(workspace, run, working_agent(host, run))

    @router.get("/timeline", summary="A run's timeline: phases, consultations, verdicts, script runs, files, the paper")
    async def timeline(host: Host, principal: Principal, run_id: RunId = None) -> RunTimeline | None:
        """What the run's workspace holds now, for the page's timeline (null before the session's first run).
        404 `not_found` for a run not of this session, `no_workspace` for a run that has none."""
        return await asyncio.to_thread(_timeline, host, principal, run_id)

    @router.get(
        "/files/{path:path}",
        summary="One file of a run's workspace",
        response_class=FileResponse,
        responses={200: {"content": {t: {} for t in sorted(set(MEDIA_TYPES.values()))}, "description": "The file."}},
    )
    async def file(
        host: Host, principal: Principal, path: Annotated[str, PathParam(max_length=400)], run_id: RunId = None
    ) -> FileResponse:
        """The file at `path` (e.g. `paper/paper.pdf`, `consultation/modeler_researcher_1.md`) of the run's workspace,
        with its media type; served inert (no scripts run from it). 404 `not_found` for a path that is not a file of
        the workspace's output folders (a path that leaves them included)."""
        run = await asyncio.to_thread(_run, host, principal, run_id)
        workspace = workspace_of(host, run) if run is not None else None
        if workspace is None:
            raise ApiError(404, "not_found", "This session has no run with a workspace.")
        root = workspace.resolve()
        parts = path.split("/")
        target = root.joinpath(*parts) if "\x00" not in path and ".." not in parts and "" not in parts else root
        if not _readable(target, root):  # checked on the path as asked and as resolved: they must be one
            raise ApiError(404, "not_found", f"{path} is not a file of run {run.id}'s workspace.", field="path")
        return FileResponse(
            target,
            media_type=MEDIA_TYPES[target.suffix.lower()],
            headers=_NO_ACTIVE_CONTENT,
            content_disposition_type="inline",
            filename=target.name,
        )

    # ---- the session's own problem (`_upload`) ----

    def _problem_folder(host: Any, principal: str) -> Path:
        folder = session_problem(host.for_principal(principal).env)
        if folder is None:  # pragma: no cover - a web principal is always a session
            raise ApiError(403, "no_session_problem", "This principal has no problem of its own.")
        return folder

    def _refused(error: Exception) -> Exception:
        refusal = UploadRefused.of(error)
        return ApiError(refusal.status, refusal.error_code, refusal.localized, field=FIELD)

    def _view(host: Any, principal: str, request: Request) -> ProblemView:
        problem = getattr(host.options, "problem", None)
        return problem_view(host.for_principal(principal).env, problem, _lang(request))

    async def _receive(request: Request, host: Any, principal: str, sink: Any) -> ProblemView:
        folder = await asyncio.to_thread(_problem_folder, host, principal)
        try:
            await receive_file(request, lambda name: sink(folder, name), field=FIELD, limit=MAX_DATA_BYTES)
        except (UploadRefused, ToolError) as error:
            raise _refused(error) from None
        return await asyncio.to_thread(_view, host, principal, request)

    refusals = {
        413: {**kit.responses[422], "description": "The file is over its limit; nothing was changed."},
        415: {**kit.responses[422], "description": "Not a type the problem takes; nothing was changed."},
    }

    def body(example: str) -> dict[str, Any]:
        """The upload's form for the API's docs: its part `file`, whose name says its type (`example`)."""
        disposition = {
            "description": "The file's name: its suffix says its type (see `limits` in GET /api/modeling/problem).",
            "schema": {"type": "string"},
            "example": f'form-data; name="{FIELD}"; filename="{example}"',
        }
        form = {"schema": _FORM, "encoding": {FIELD: {"headers": {"Content-Disposition": disposition}}}}
        return {"requestBody": {"required": True, "content": {"multipart/form-data": form}}}

    @router.get("/problem", summary="The problem a new run of this session works on, with its tasks")
    async def problem(request: Request, host: Host, principal: Principal) -> ProblemView:
        """The session's uploaded problem (`source` `upload`: its statement's name, data files, the tasks read from
        the statement or as corrected, whether the team can start on it) or the server's `--problem` (`server`), or
        none (`source` null); `limits`: what an upload may be."""
        return await asyncio.to_thread(_view, host, principal, request)

    @router.post(
        "/problem/statement", status_code=201, responses=refusals, openapi_extra=body("problem.md"),
        summary="Upload the problem's statement (multipart/form-data, part `file`: .md, .markdown, .txt or .pdf)",
    )  # fmt: skip
    async def statement(request: Request, host: Host, principal: Principal) -> ProblemView:
        """The statement becomes this session's problem's (replacing an earlier one; the tasks are read from it
        again; a PDF's from its text). Refused, nothing changed: 413 `file_too_large`, 415 `unsupported_file_type`,
        422 `path_like_name`, `empty_file`, `empty_statement`, `not_utf8`, `no_tasks` (it names no task),
        `pdf_unreadable`, `pdf_encrypted`, `pdf_no_text` (a scan), `pdf_too_long`, `pdf_too_much_text`,
        `pdf_too_slow`."""
        return await _receive(request, host, principal, save_statement)

    @router.post(
        "/problem/data", status_code=201, responses=refusals, openapi_extra=body("data.csv"),
        summary="Upload a data file of the problem (multipart/form-data, part `file`: a .csv table or .xlsx workbook)",
    )  # fmt: skip
    async def data(request: Request, host: Host, principal: Principal) -> ProblemView:
        """The table, or the workbook (each sheet holding a table read as `<stem>.<sheet>.csv`: `tables` in the
        view), goes into this session's problem (a file of the same name is replaced). Refused, nothing changed: 413
        `file_too_large`, 415 `unsupported_file_type`, 422 `path_like_name`, `empty_file`, `not_table` (not a CSV
        with a header and rows as wide as it), `not_workbook`, `workbook_empty`, `too_many_files`, and the
        workbook's bounds: `workbook_too_big`, `too_many_sheets`, `sheet_too_long`, `sheet_too_wide`,
        `too_many_cells`, `sheet_too_big`, `workbook_too_slow`."""
        return await _receive(request, host, principal, save_data)

    @router.delete("/problem/data/{name}", summary="Remove a data file of the session's problem")
    async def drop(
        request: Request, host: Host, principal: Principal, name: Annotated[str, PathParam(max_length=200)]
    ) -> ProblemView:
        """404 `no_such_file` when the session's problem has no data file of that name."""
        folder = await asyncio.to_thread(_problem_folder, host, principal)
        try:
            await asyncio.to_thread(drop_data, folder, name)
        except UploadRefused as error:
            raise _refused(error) from None
        return await asyncio.to_thread(_view, host, principal, request)

    @router.put("/problem/tasks", summary="Correct the tasks of the session's problem before the team starts")
    async def tasks(request: Request, host: Host, principal: Principal, edits: TaskEdits) -> ProblemView:
        """The tasks, in order, as the person corrected them (text and kind each; a task left out is dropped, one
        added is a new one): the team works on these. Refused, nothing changed: 409 `no_statement` (no statement
        uploaded yet), 422 `bad_task_count`, `bad_task_text`, `bad_task_kind`."""
        folder = await asyncio.to_thread(_problem_folder, host, principal)
        try:
            await asyncio.to_thread(set_tasks, folder, edits.tasks)
        except UploadRefused as error:
            raise _refused(error) from None
        return await asyncio.to_thread(_view, host, principal, request)

    @router.delete("/problem", summary="Forget the session's uploaded problem (back to the server's, if any)")
    async def forget(request: Request, host: Host, principal: Principal) -> ProblemView:
        """The runs already started keep their own copy of it."""
        folder = await asyncio.to_thread(_problem_folder, host, principal)
        await asyncio.to_thread(clear_problem, folder)
        return await asyncio.to_thread(_view, host, principal, request)

    return router


def _lang(request: Request) -> str:
    """The reader's language, as the web front end reads it for its errors: `?lang=`, else `Accept-Language`."""
    asked = request.query_params.get("lang") or request.headers.get("accept-language", "").split(",")[0]
    return normalize_lang(asked.split(";")[0].strip() or None)


class TaskEdits(BaseModel):
    tasks: list[TaskEdit] = Field(max_length=50)


_FORM = {
    "type": "object",
    "properties": {FIELD: {"type": "string", "format": "binary", "minLength": 1}},
    "required": [FIELD],
}


def web_part() -> WebPart:
    """The modeling app's web part (`AppDef.web`)."""
    return WebPart(static=Path(__file__).with_name("static"), styles=("app.css",), router=router, shared_data="none")
