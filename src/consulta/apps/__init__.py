"""The reference apps, by name. Each app builds its agent from options recorded on its runs, so any process can
rebuild the agent of a run it resumes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..runtime import Agent, ConfigError

__all__ = ["APPS", "AppDef", "get_app"]


@dataclass(frozen=True, kw_only=True)
class AppDef:
    name: str
    description: str
    build_agent: Callable[..., Agent]
    default_options: Callable[[Path], dict[str, Any]]
    """Options for a new session given the app's data dir (e.g. ln2's inventory file there)."""


def _ln2() -> AppDef:
    from . import ln2

    return AppDef(
        name="ln2",
        description="liquid-nitrogen cryo-box inventory assistant (seed 001)",
        build_agent=ln2.build_agent,
        default_options=lambda app_dir: {"inventory": str(ln2.default_inventory(app_dir))},
    )


_FACTORIES: dict[str, Callable[[], AppDef]] = {"ln2": _ln2}
APPS = tuple(_FACTORIES)


def get_app(name: str) -> AppDef:
    factory = _FACTORIES.get(name)
    if factory is None:
        raise ConfigError(f"Unknown app {name!r}. Apps: {', '.join(APPS)}.")
    return factory()
