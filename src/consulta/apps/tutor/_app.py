"""The tutor declared for every front end: the orchestrator (each turn's main agent) hands the turn to the assistant
once a packet is accepted; the student's files go in the upload folder."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from ...i18n import normalize_lang, t
from .._def import AppDef, AppEnv, AppView, DesktopPart, McpPart, TerminalPart, WebPart
from ._agent import ASSISTANT, ORCHESTRATOR_AGENT, TutorOptions, build_agent, build_assistant, follow_up, uploads_folder
from ._uploads import copy_upload

__all__ = ["APP", "TutorFlags"]


class TutorFlags(BaseModel):
    """The terminal's own flags for the tutor."""

    file: list[Path] = Field(default_factory=list, description="A file the student uploads (repeatable)")

    @field_validator("file")
    @classmethod
    def _exist(cls, files: list[Path], info: ValidationInfo) -> list[Path]:
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            # The command's language when it says it (validation context), else CONSULTA_LANG's.
            lang = (info.context or {}).get("lang") or normalize_lang(os.environ.get("CONSULTA_LANG"))
            raise ValueError(t("tutor.cli.no_file", lang, path=", ".join(missing)))
        return files


def _upload(flags: TutorFlags, host: AppView) -> None:
    """Copy the student's files into the session's upload folder, checked as any upload is."""
    folder = host.data_path
    assert folder is not None
    for source in flags.file:
        copy_upload(folder, source)  # the upload folder's checks, as on every front end (UploadRefused: one line)


def _welcome(host: AppView, lang: str) -> str | None:
    return t("tutor.cli.uploads", lang, path=str(host.data_path))


def _data(options: TutorOptions, env: AppEnv) -> Path:
    return uploads_folder(options, env)


def _web() -> WebPart:
    from ._web import router

    return WebPart(
        static=Path(str(resources.files(__package__).joinpath("static"))), styles=("app.css",), router=router
    )


def _desktop() -> DesktopPart:
    from ._desktop import panels

    return DesktopPart(panels=panels)


def _mcp() -> McpPart:
    from ._mcp import INSTRUCTIONS, tools

    return McpPart(instructions=INSTRUCTIONS, tools=tools)


APP = AppDef(
    name="tutor",
    description="pandas tutoring: an orchestrator consults experts, an assistant talks to the student (seed 000)",
    agents={ORCHESTRATOR_AGENT: build_agent, ASSISTANT: build_assistant},
    main_agent=ORCHESTRATOR_AGENT,
    options=TutorOptions,
    data_path=_data,
    follow_up=follow_up,
    web=_web,
    desktop=_desktop,
    mcp=_mcp,
    terminal=TerminalPart(welcome=_welcome, flags=TutorFlags, prepare=_upload),
)
