"""Traces: every run, step, tool call, ask and consultation as an OpenTelemetry span in the run's trace, exported
as `CONSULTA_TRACES` says (off by default)."""

from ._provider import Tracing
from ._setting import TRACES_SETTING, tracing_from_setting

__all__ = ["TRACES_SETTING", "Tracing", "tracing_from_setting"]
