"""Tracing: a tracer provider with one exporter, the span builder listening to a runtime, and the hooks the engine
needs (pydantic-ai's instrumentation settings, the run's context around the engine's work)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

from opentelemetry import context as otel_context
from opentelemetry.context import Context
from pydantic_ai import InstrumentationSettings

from .._events import Event
from .._store import Store
from ._spans import SpanBuilder

if TYPE_CHECKING:  # the SDK is loaded only when tracing is on (~70 ms)
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = ["Tracing"]

_log = logging.getLogger("consulta.tracing")

CONSULTATION_TOOL = "consult_expert"
"""The asks package's consultation tool (its CONSULT_EXPERT_TOOL_NAME; the runtime does not import asks)."""


class _Subscribable(Protocol):
    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]: ...


class Tracing:
    """Traces of runs as OpenTelemetry spans, sent to `exporter`.

    Its tracer provider is its own (the process's global provider is left alone). `batch` exports from a background
    thread (the default: a run never waits on an exporter); without it each span is exported when it ends (tests).
    """

    def __init__(
        self,
        *,
        exporter: SpanExporter,
        destination: str = "",
        batch: bool = True,
        consultation_tool: str = CONSULTATION_TOOL,
    ) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        self.destination = destination
        """Where the spans go, for people: `stderr`, a file's path, an OTLP endpoint."""
        self.provider: TracerProvider = TracerProvider(resource=Resource.create({"service.name": "consulta"}))
        self.provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
        self._tracer = self.provider.get_tracer("consulta")
        self._consultation_tool = consultation_tool
        self._builders: list[SpanBuilder] = []
        self._unsubscribe: list[Callable[[], None]] = []
        self._instrumentation: InstrumentationSettings | None = None
        self._shut = False

    def install(self, runtime: _Subscribable, store: Store) -> None:
        """Trace every run of `runtime` (a listener on its events; `store` tells each run's trace id)."""
        builder = SpanBuilder(tracer=self._tracer, store=store, consultation_tool=self._consultation_tool)
        self._builders.append(builder)
        self._unsubscribe.append(runtime.subscribe(builder))

    def instrumentation(self) -> InstrumentationSettings:
        """pydantic-ai's instrumentation on this provider, for the engine agent (its model requests become spans).

        Binary content (uploaded files) stays out of the spans; prompts and replies are kept."""
        if self._instrumentation is None:
            self._instrumentation = InstrumentationSettings(tracer_provider=self.provider, include_binary_content=False)
        return self._instrumentation

    @contextmanager
    def run_context(self, run_id: str) -> Iterator[None]:
        """Make the run's span the current one for the engine's work inside (pydantic-ai's spans nest under it)."""
        context = self._context_of(run_id)
        token = otel_context.attach(context) if context is not None else None
        try:
            yield
        finally:
            if token is not None:
                otel_context.detach(token)

    def shutdown(self) -> None:
        """Stop listening, end the spans still open (marked `consulta.unfinished`), flush and close the exporter."""
        if self._shut:
            return
        self._shut = True
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        for builder in self._builders:
            builder.close()
        self.provider.shutdown()

    def _context_of(self, run_id: str) -> Context | None:
        try:
            for builder in self._builders:
                context = builder.open_context(run_id)
                if context is not None:
                    return context
            return self._builders[0].trace_context(run_id) if self._builders else None
        except Exception:  # tracing must never break a run: the engine's spans go where they would have gone
            _log.warning("No trace context for run %s", run_id, exc_info=True)
            return None
