"""The apps, by name, and what an app declares about itself (`AppDef`: agents, options, hand-over, front-end parts).

The reference apps (`ln2`, `tutor`, `quiz`, `advisor`, `modeling`) are known by name and imported when first asked for; another app (a plug-in, a
test's) is added with `register_app`. Front ends take an app by name (`get_app`) or its `AppDef` itself.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, cast

from .._lazy import lazy_names

if TYPE_CHECKING:
    from ._def import (
        AgentBuilder,
        AppDef,
        AppEnv,
        AppOptions,
        AppView,
        DesktopKit,
        DesktopPanel,
        DesktopPart,
        FollowUp,
        Handover,
        McpPart,
        SharedData,
        TerminalPart,
        WebKit,
        WebPart,
    )
    from ._proposals import PERSON, PERSON_MODEL, Proposal, is_proposal, propose, settle
    from ._uploads import FileUpload, UploadSink, receive_file

__all__ = [
    "PERSON",
    "PERSON_MODEL",
    "AgentBuilder",
    "AppDef",
    "AppEnv",
    "AppOptions",
    "AppView",
    "DEFAULT_APP",
    "DesktopKit",
    "DesktopPanel",
    "DesktopPart",
    "FileUpload",
    "FollowUp",
    "Handover",
    "McpPart",
    "Proposal",
    "SharedData",
    "TerminalPart",
    "UploadSink",
    "WebKit",
    "WebPart",
    "app_names",
    "get_app",
    "is_proposal",
    "propose",
    "receive_file",
    "register_app",
    "resolve_app",
    "settle",
]


__getattr__ = lazy_names(__name__, __file__)
"""The declaration types bring the runtime (pydantic-ai, SQLAlchemy) with them: imported when first used, so that
listing the apps' names (`consulta --help`) does not pay for it."""

_BUILT_IN = ("ln2", "tutor", "quiz", "advisor", "modeling")
"""The reference apps: each a subpackage of this one whose `APP` declares it, imported when first asked for."""
DEFAULT_APP = "ln2"
"""The app `consulta serve`, `desktop` and `mcp` serve when none is named."""
_REGISTERED: dict[str, AppDef] = {}


def register_app(app: AppDef) -> AppDef:
    """Make `app` known by its name to every front end (`consulta chat <name>` …). Registering a name again replaces
    the earlier app of that name (a built-in one included)."""
    _REGISTERED[app.name] = app
    return app


def app_names() -> tuple[str, ...]:
    """The names of the apps known here: the reference apps, then the registered ones."""
    return tuple(dict.fromkeys([*_BUILT_IN, *_REGISTERED]))


def get_app(name: str) -> AppDef:
    app = _REGISTERED.get(name)
    if app is not None:
        return app
    if name not in _BUILT_IN:
        from ..runtime import ConfigError

        raise ConfigError(f"Unknown app {name!r}. Apps: {', '.join(app_names())}.")
    return cast("AppDef", import_module(f".{name}", __package__).APP)


def resolve_app(app: str | AppDef) -> AppDef:
    """The app itself, or the app of that name."""
    return get_app(app) if isinstance(app, str) else app
