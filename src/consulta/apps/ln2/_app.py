"""ln2 declared for every front end: its agent over one inventory file, its options, and its front-end parts."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from pydantic import Field

from ...i18n import t
from ...runtime import Agent
from .._def import AppDef, AppEnv, AppOptions, AppView, DesktopPart, McpPart, TerminalPart, WebPart
from ._agent import AGENT, build_agent, default_inventory

__all__ = ["APP", "Ln2Options"]


class Ln2Options(AppOptions):
    inventory: Path | None = Field(
        None, description="The inventory YAML (default: a copy of the sample in the data dir)"
    )


def inventory_path(options: Ln2Options, env: AppEnv) -> Path:
    """The inventory file: the one given, else the data dir's (a copy of the sample the first time)."""
    if options.inventory is not None:
        return options.inventory.expanduser().resolve()
    return default_inventory(env.data_dir)


def _build(options: Ln2Options, env: AppEnv) -> Agent:
    return build_agent(inventory=inventory_path(options, env), question_timeout=options.question_timeout)


def _welcome(host: AppView, lang: str) -> str | None:
    return t("ln2.cli.inventory", lang, path=str(host.data_path))


def _web() -> WebPart:
    from ._web import router

    return WebPart(
        static=Path(str(resources.files(__package__).joinpath("static"))),
        styles=("app.css",),
        router=router,
        shared_data="sessions",  # one person's inventory on their own server: each of their sessions sees it all
    )


def _desktop() -> DesktopPart:
    from ._desktop import panels

    return DesktopPart(panels=panels)


def _mcp() -> McpPart:
    from ._mcp import instructions

    return McpPart(instructions=instructions)


APP = AppDef(
    name="ln2",
    description="liquid-nitrogen cryo-box inventory assistant (seed 001)",
    agents={AGENT: _build},
    main_agent=AGENT,
    options=Ln2Options,
    data_path=inventory_path,
    web=_web,
    desktop=_desktop,
    mcp=_mcp,
    terminal=TerminalPart(welcome=_welcome),
)
