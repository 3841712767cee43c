"""One app served to people through a front end (web, desktop, MCP): one store, one runtime, every call scoped to
a principal — the person, browser session or token the runs belong to.

A principal sees only its own runs and asks: another principal's id is answered exactly like an unknown id
(NotFoundError), so ids reveal nothing. Answers go through the runtime's ask API (validated, conditional close),
and a run whose process is gone is resumed here, so an answer always lets the run continue.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..apps import AppDef, get_app
from ..config import Settings
from ..i18n import normalize_lang
from ..models import resolve_model
from ..runtime import (
    Agent,
    AskPolicy,
    AskRecord,
    AskStatus,
    Event,
    EventRecord,
    NotFoundError,
    RunRecord,
    Runtime,
    Store,
)

__all__ = ["LOCAL_PRINCIPAL", "AppHost"]

LOCAL_PRINCIPAL = "local"
"""The machine's own user: runs started in the terminal or the desktop window."""


class AppHost:
    """Serve app `app` (e.g. `ln2`) to front ends. Create inside the event loop that will run the agents."""

    def __init__(
        self,
        *,
        app: str,
        settings: Settings,
        options: dict[str, Any] | None = None,
        ask_policy: AskPolicy = "wait",
        store: Store | None = None,
        runtime: Runtime | None = None,
    ) -> None:
        self.settings = settings
        self.app: AppDef = get_app(app)
        self.options = {**self.app.default_options(settings), **(options or {})}
        self.agent: Agent = self.app.build_agent(**self.options)
        self.store = store or (runtime.store if runtime is not None else Store(settings.database_url))
        self.runtime = runtime or Runtime(
            store=self.store,
            resolve_model=lambda spec: resolve_model(spec, models_dir=settings.models_dir),
            ask_policy=ask_policy,
        )
        self.runtime.register(self.agent)

    # ---- the model --------------------------------------------------------------------------------------------

    def load_model(self, *, progress: Callable[[int, int], None] | None = None) -> None:
        """Make the default model ready (join the embedded GGUF, load it). Blocking: call it off the event loop."""
        spec = self.settings.model
        if spec == "local":
            from ..models._gguf import ensure_default_gguf

            ensure_default_gguf(self.settings.models_dir, progress=progress)
        model = resolve_model(spec, models_dir=self.settings.models_dir)
        load = getattr(model, "load", None)
        if callable(load):
            load()

    # ---- runs -------------------------------------------------------------------------------------------------

    async def start(self, prompt: str, *, principal: str, lang: str | None = None, continue_from: str | None = None) -> RunRecord:
        """Start a run of the app's agent for `principal` (continuing its earlier run `continue_from`, if given)."""
        if continue_from is not None:
            self.run(continue_from, principal=principal)
        return await self.runtime.start(
            self.agent,
            prompt,
            model=self.settings.model,
            lang=normalize_lang(lang or self.settings.lang),
            continue_from=continue_from,
            principal=principal,
        )

    def run(self, run_id: str, *, principal: str) -> RunRecord:
        """The run, if it belongs to `principal`; else NotFoundError."""
        try:
            run = self.store.get_run(run_id)
        except NotFoundError:
            run = None
        if run is None or run.principal != principal or run.app != self.app.name:
            raise NotFoundError(f"No run with id {run_id!r} in this session.")
        return run

    def runs(self, *, principal: str, limit: int = 50) -> list[RunRecord]:
        return self.store.list_runs(principal=principal, app=self.app.name, limit=limit)

    def events(self, run_id: str, *, principal: str, after_id: int = 0) -> list[EventRecord]:
        """The run's recorded events after `after_id` (events of a step in progress are recorded with its checkpoint)."""
        self.run(run_id, principal=principal)
        return self.store.list_events(run_id, after_id=after_id)

    async def stop(self, run_id: str, *, principal: str) -> RunRecord:
        self.run(run_id, principal=principal)
        return await self.runtime.stop(run_id)

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        """Hear every event of every run in this process (filter by run id, or by `owns_run`)."""
        return self.runtime.subscribe(listener)

    # ---- asks -------------------------------------------------------------------------------------------------

    def asks(self, *, principal: str, run_id: str | None = None, status: str | None = AskStatus.pending) -> list[AskRecord]:
        if run_id is not None:
            self.run(run_id, principal=principal)
        return self.store.list_asks(status=status, run_id=run_id, principal=principal)

    def ask(self, ask_id: str, *, principal: str) -> AskRecord:
        """The ask, if its run belongs to `principal`; else NotFoundError."""
        try:
            ask = self.store.get_ask(ask_id)
            self.run(ask.run_id, principal=principal)
        except NotFoundError:
            raise NotFoundError(f"No ask with id {ask_id!r} in this session.") from None
        return ask

    async def answer(self, ask_id: str, value: Any, *, principal: str) -> AskRecord:
        """Answer the ask (NotFoundError, ConflictError when already closed, InvalidAnswerError; nothing changes on
        an error) and make sure its run continues."""
        ask = self.ask(ask_id, principal=principal)
        closed = self.runtime.answer(ask_id, value, answered_by=principal)
        await self._continue_orphan(ask.run_id)
        return closed

    async def cancel(self, ask_id: str, *, principal: str) -> AskRecord:
        """Cancel (decline) the ask: the model is told the person cancelled (`question_cancelled` for a question)."""
        ask = self.ask(ask_id, principal=principal)
        closed = self.runtime.cancel_ask(ask_id, answered_by=principal)
        await self._continue_orphan(ask.run_id)
        return closed

    async def _continue_orphan(self, run_id: str) -> None:
        """A run left by a process that is gone (a restarted server) is taken up here; a live one continues where it is."""
        if self.runtime.is_running_here(run_id):
            return  # the common case, decided without reading the store
        run = self.store.get_run(run_id)
        if run.external or self.store.run_is_live_elsewhere(run_id):
            return  # an outside client (MCP) picks the answer up itself; a live run continues where it is
        await self.runtime.resume(run_id, self.app.build_agent(**run.options))

    # ---- lifetime ---------------------------------------------------------------------------------------------

    @property
    def data_path(self) -> Path | None:
        """The app's data file (ln2: the inventory YAML), if it has one."""
        value = self.options.get("inventory")
        return Path(value) if value else None

    async def aclose(self) -> None:
        await self.runtime.aclose()
        self.store.close()
