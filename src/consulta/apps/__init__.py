"""The reference apps, by name. Each app builds its agent from options recorded on its runs, so any process can
rebuild the agent of a run it resumes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..config import Settings
from ..runtime import Agent, ConfigError, RunRecord, Store

__all__ = ["APPS", "AppDef", "get_app"]


@dataclass(frozen=True, kw_only=True)
class AppDef:
    name: str
    description: str
    build_agent: Callable[..., Agent]
    default_options: Callable[[Settings], dict[str, Any]]
    """Options for a new session given the settings (e.g. ln2's inventory file in the app's data dir)."""
    follow_up: Callable[[Store, RunRecord], tuple[Agent, str] | None] | None = None
    """After a run of the app's agent finishes: another agent and its prompt to hand the turn to (the tutor's
    conversational assistant speaks from the orchestrator's packet), or None."""


def _ln2() -> AppDef:
    from . import ln2

    return AppDef(
        name="ln2",
        description="liquid-nitrogen cryo-box inventory assistant (seed 001)",
        build_agent=ln2.build_agent,
        default_options=lambda settings: {"inventory": str(ln2.default_inventory(settings.app_dir("ln2")))},
    )


def _tutor() -> AppDef:
    from . import tutor

    return AppDef(
        name="tutor",
        description="pandas tutoring: an orchestrator consults experts, an assistant talks to the student (seed 000)",
        build_agent=tutor.build_agent,
        default_options=lambda settings: {
            "uploads": str(settings.app_dir("tutor") / "uploads"),
            "database_url": settings.database_url,
            "model": settings.model,
            "models_dir": str(settings.models_dir),
            "lang": settings.lang,
        },
        follow_up=tutor.follow_up,
    )


_FACTORIES: dict[str, Callable[[], AppDef]] = {"ln2": _ln2, "tutor": _tutor}
APPS = tuple(_FACTORIES)


def get_app(name: str) -> AppDef:
    factory = _FACTORIES.get(name)
    if factory is None:
        raise ConfigError(f"Unknown app {name!r}. Apps: {', '.join(APPS)}.")
    return factory()
