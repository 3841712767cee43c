"""What an app declares about itself, once, for every front end: its agents, its options, the hand-over from one
agent to the next, and its own parts of each front end (web routes and page, desktop panels, MCP instructions and
tools, terminal words). Front ends read these and never name an app.

The front-end parts are built lazily (`AppDef.web()`, `.desktop()` …) so an app imports without FastAPI's routers
or Qt; the kits a front end hands to a part (`WebKit`, `DesktopKit`) are what the part may use of the front end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..runtime import Agent, AppTables, ConfigError, Event, RunRecord, Runtime, Store, ToolDef

if TYPE_CHECKING:
    from pydantic_ai.models import Model

__all__ = [
    "AgentBuilder",
    "AppDef",
    "AppEnv",
    "AppOptions",
    "AppView",
    "DesktopKit",
    "DesktopPanel",
    "DesktopPart",
    "FollowUp",
    "Handover",
    "McpPart",
    "SharedData",
    "TerminalPart",
    "WebKit",
    "WebPart",
]


class AppOptions(BaseModel):
    """An app's settings for a session, recorded on each run so any process rebuilds the same agent. Subclass it with
    the app's own fields (each with a `description`: the terminal's flag help). Runtime settings (database, model,
    models dir, language) are not options: they come in `AppEnv`. The terminal's flag for a field is `--field-name`,
    or `json_schema_extra={"flag": "--other"}`; with `{"flag": False}` the field is set by the app itself (e.g. by a
    hand-over), never by a flag."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question_timeout: float = Field(
        300.0, gt=0, description="Seconds to wait for an answer to a question", json_schema_extra={"flag": "--timeout"}
    )


@dataclass(frozen=True, kw_only=True)
class AppEnv:
    """The runtime things an app's builders may use, given by the host (INTERFACES §5).

    The kit every app stands on, in one place (an app brings its own parts, not its own platform):
    - its own tables: `AppTables` declared on `AppDef.tables`, created and migrated by Alembic with the store (its
      revisions in the app's `migrations/` folder); written with `consulta.runtime.upsert` and `writing` (the write
      transaction that holds the lock from its start);
    - per-person state: `StateBook[Model]` over a `state_table` of its own (advisor's sessions, quiz's profiles),
      written alone or within the app's `writing` transaction;
    - files: `consulta._files.write_atomic` / `replacing` / `create_once` (the old file or the new one, never a part),
      `append_durable` (whole lines to a journal, fsynced);
    - a model's typed answer: `typed_answer(…, within=current_tool_call(), timeout=…)`, or its probability of each
      label: `label_probabilities(…, timeout=…)`; each bounded on every backend."""

    store: Store
    resolve_model: Callable[[str], Model]
    model: str
    """The model spec runs start with (`local`, `openai:…`, `scripted:…`)."""
    lang: str
    data_dir: Path
    """The app's own data folder (`<home>/apps/<app>`), made if missing."""
    session: str | None = None
    """The session (a front end's principal) the agents built with this env act for, when it is not the machine's own
    user: an app keeps what is a session's own (e.g. the tutor's uploads) apart by it, and its `data_path` for the
    session names that data (a host builds a session's own agents only for an app whose data differs by session).
    None: the machine's own user (the terminal, the desktop window), whose data is the app's default."""


AgentBuilder = Callable[[Any, AppEnv], Agent]
"""`(options, env) -> Agent`: options is an instance of the app's `AppDef.options` model. The builder sets
`Agent.name` to the name it is registered under and `Agent.options` to the options to record (`model_dump`)."""


@dataclass(frozen=True, kw_only=True)
class Handover:
    """The turn goes to agent `agent` of the same app, asked `prompt`; `options` (field values) are set on top of the
    finished run's options for it (e.g. the task the tutor's assistant checks its reply against). `lang`: the
    language of the person the turn answers, when `prompt` is not their own words (None: the finished run's)."""

    agent: str
    prompt: str
    options: Mapping[str, Any] = field(default_factory=dict)
    lang: str | None = None


FollowUp = Callable[[RunRecord, AppEnv], Handover | None]
"""After a run of the app finished: the hand-over to the next agent, or None. The host does it on every front end."""


class AppView(Protocol):
    """What an app's front-end parts may read of the host serving it: its options, env and data, its main agent and
    its runtime (through which a person's own write is staged and approved like any write, see `propose`). A front end
    serving several sessions reads a session's own through `for_principal`."""

    @property
    def options(self) -> AppOptions: ...

    @property
    def agent(self) -> Agent: ...

    @property
    def runtime(self) -> Runtime: ...

    @property
    def env(self) -> AppEnv: ...

    @property
    def data_path(self) -> Path | None: ...

    def for_principal(self, principal: str | None) -> AppView:
        """The same app as `principal`'s runs see it: its main agent, env (`session`) and data are that session's."""
        ...


# ---- front-end parts ------------------------------------------------------------------------------------------


SharedData = Literal["sessions", "none"]
"""Who on the web may read and change an app's shared data — what every session works on alike, not a run's own
(ln2's inventory history and its rollbacks): `sessions`, every session the server issued (a single-user local
server: the person's own browsers and API clients); `none`, no web session (its routes answer 403)."""


@dataclass(frozen=True, kw_only=True)
class WebKit:
    """What the web front end gives an app's router: FastAPI dependency annotations for the serving host (`AppView`),
    the caller's principal, and the caller's principal where the app's shared data is concerned (`shared`: a 403
    unless the app's `WebPart.shared_data` lets the caller in), its structured error type
    `error(status, code, message, *, hint=None, field=None)`, and the error responses to document."""

    host: Any
    principal: Any
    shared: Any
    error: Callable[..., Exception]
    responses: dict[int | str, dict[str, Any]]

    def api_router(self, app: str) -> Any:
        """The app's FastAPI router: its routes under `/api/<app>`, tagged with the app, the errors documented."""
        from fastapi import APIRouter

        return APIRouter(prefix=f"/api/{app}", tags=[app], responses=self.responses)


@dataclass(frozen=True, kw_only=True)
class WebPart:
    """An app's part of the web page. `static` is served at `/apps/<name>/static/`; `panels` (a file in it) is the
    HTML of the app's panels, put in the page next to the chat (text by `data-i18n` keys only); `script` (a module in
    it) exports `mount(ctx)` (see frontends/web/static/js/main.js for `ctx` and what `mount` returns); `styles` are
    its stylesheets. `router(kit)` adds the app's own API routes (e.g. `/api/<name>/…`). `shared_data`: who may read
    and change the app's shared data through them (`kit.shared`), see `SharedData`."""

    static: Path
    panels: str = "panels.html"
    script: str = "app.js"
    styles: tuple[str, ...] = ()
    router: Callable[[WebKit], Any] | None = None
    shared_data: SharedData = "none"


@dataclass(frozen=True, kw_only=True)
class DesktopPanel:
    """One side panel of the desktop window: `widget` (a QWidget) shown `placement` (`top`: above the tabs; `tab`: a
    tab titled `title`); `on_event`, if given, hears every runtime event, on the GUI thread."""

    widget: Any
    title: str = ""
    placement: Literal["top", "tab"] = "tab"
    on_event: Callable[[Event], None] | None = None


class DesktopKit(Protocol):
    """What the desktop window gives an app's panels."""

    lang: str
    principal: str
    host: AppView | None
    """The host, once ready (the panels are built then)."""

    def call(
        self,
        work: Callable[[Any], Any],
        *,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> bool:
        """Run `work(host)` (a coroutine function) on the host's loop; the callbacks come back on the GUI thread."""
        ...

    def notify(self, text: str, tone: str = "good") -> None:
        """Say something in the chat transcript (tones: good, warn, bad)."""
        ...

    def show_error(self, error: BaseException) -> None: ...


@dataclass(frozen=True, kw_only=True)
class DesktopPart:
    """`panels(kit)` builds the app's side panels (Qt imported only then). `reply(text, lang)`, what the window's chat
    shows of an agent's reply when it is not prose (e.g. the words of a JSON reply whose tool calls the panels
    apply); None shows the text as it is."""

    panels: Callable[[DesktopKit], Sequence[DesktopPanel]]
    reply: Callable[[str, str], str] | None = None


@dataclass(frozen=True, kw_only=True)
class McpPart:
    """What MCP clients read besides the agent's tools: `instructions` (how the app's tools go together over MCP; a
    function of the host when they depend on its data — an agent whose instructions are a function of the run has
    its text sent only through these), and `tools(host)`: extra read tools served like the agent's read tools."""

    instructions: str | Callable[[AppView], str] = ""
    tools: Callable[[AppView], Sequence[ToolDef]] | None = None


@dataclass(frozen=True, kw_only=True)
class TerminalPart:
    """The terminal's words for the app: `welcome(host, lang)` names the app's data in the chat's first line (or
    None); `flags`, a pydantic model of terminal-only flags (not recorded on runs, e.g. files to upload), given to
    `prepare(flags, host)` before the session starts. `commands()`, the app's own terminal commands (a `typer.Typer`,
    built only when the app's commands are asked for): `consulta <app> <command>`. `reply(text, lang)`, what a person
    reads of an agent's reply when it is not prose (e.g. the words of a JSON reply); None shows the text as it is."""

    welcome: Callable[[AppView, str], str | None] | None = None
    flags: type[BaseModel] | None = None
    prepare: Callable[[Any, AppView], None] | None = None
    commands: Callable[[], Any] | None = None
    reply: Callable[[str, str], str] | None = None


@dataclass(frozen=True, kw_only=True)
class AppDef:
    """One app, declared once. `agents` maps each agent's name to its builder; `main_agent` starts each turn;
    `options` is the options model; `check_options(options)`, if given, refuses options the app cannot work with (a
    ConsultaError in the person's words, e.g. a data folder that is not one): the terminal calls it for every front
    end it starts, before anything starts (a run resumed from its record is not checked again: it keeps what it
    started with); `data_path(options, env)` is the app's data file or folder, if any; `follow_up` hands a finished
    turn to another agent. `web`, `desktop`, `mcp`: lazy factories of the app's front-end parts (None: the front end
    serves the chat alone); `terminal`: its terminal words. `tables`: the app's own tables in the store's database,
    created and migrated with the store when a host opens the app (`Store.open_app_tables`)."""

    name: str
    description: str
    agents: Mapping[str, AgentBuilder]
    main_agent: str
    options: type[AppOptions] = AppOptions
    check_options: Callable[[Any], None] | None = None
    data_path: Callable[[Any, AppEnv], Path | None] | None = None
    follow_up: FollowUp | None = None
    web: Callable[[], WebPart] | None = None
    desktop: Callable[[], DesktopPart] | None = None
    mcp: Callable[[], McpPart] | None = None
    terminal: TerminalPart = field(default_factory=TerminalPart)
    tables: AppTables | None = None

    def __post_init__(self) -> None:
        if self.main_agent not in self.agents:
            raise ConfigError(
                f"App {self.name!r}: main agent {self.main_agent!r} is not among its agents {sorted(self.agents)}."
            )

    def parse_options(self, values: Mapping[str, Any] | AppOptions | None = None) -> AppOptions:
        """The app's options from `values` (validated: unknown or bad fields raise pydantic's ValidationError)."""
        if isinstance(values, self.options):
            return values
        if isinstance(values, AppOptions):
            values = values.model_dump()
        return self.options.model_validate(dict(values or {}))

    def recorded_options(self, values: Mapping[str, Any]) -> AppOptions:
        """The options a run recorded, read leniently: fields this version no longer has (e.g. the runtime settings
        earlier versions recorded) are dropped; the rest is validated."""
        known = self.options.model_fields
        return self.options.model_validate({k: v for k, v in values.items() if k in known})

    def build(self, agent: str, options: AppOptions, env: AppEnv) -> Agent:
        """Agent `agent` ("" = the main agent) over `options`."""
        name = agent or self.main_agent
        builder = self.agents.get(name)
        if builder is None:
            raise ConfigError(f"App {self.name!r} has no agent {name!r}; its agents: {', '.join(sorted(self.agents))}.")
        return builder(options, env)
