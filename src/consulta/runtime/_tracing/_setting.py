"""The traces setting (`CONSULTA_TRACES`): off, console, file:/path/traces.jsonl, otlp, otlp:http://host:4318."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

from .._errors import ConfigError
from ._provider import Tracing

__all__ = ["TRACES_SETTING", "tracing_from_setting"]

TRACES_SETTING = "CONSULTA_TRACES"
_FORMS = (
    "off (the default), console (to stderr), file:/path/traces.jsonl (one JSON span a line), "
    "otlp (OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318) or otlp:http://host:4318"
)
_OTLP_DEFAULT = "http://localhost:4318"


def tracing_from_setting(value: str | None) -> Tracing | None:
    """The tracing a setting asks for, or None when it is off (empty means off): nothing is then installed.

    A value that is none of the accepted forms, or a destination that cannot be used, is a ConfigError naming them.
    """
    text = (value or "").strip()
    kind, colon, rest = text.partition(":")
    match kind.lower(), bool(colon):
        case ("" | "off", False):
            return None
        case ("console", False):
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter  # the SDK only when tracing is on

            # stderr: stdout is a front end's own channel (the terminal's replies, the MCP server's protocol)
            return Tracing(exporter=ConsoleSpanExporter(out=sys.stderr), destination="stderr")
        case ("file", True):
            return _to_file(rest.strip())
        case ("otlp", False):
            # the standard variables: the traces endpoint as it is, else the collector's base URL (+ /v1/traces)
            if os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
                return _to_otlp(
                    _url(os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"], where="OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                )
            base = _url(
                os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or _OTLP_DEFAULT, where="OTEL_EXPORTER_OTLP_ENDPOINT"
            )
            return _to_otlp(_traces_path(base))
        case ("otlp", True):
            return _to_otlp(_traces_path(_url(rest.strip(), where=TRACES_SETTING)))
        case _:
            raise ConfigError(f"{TRACES_SETTING}={text!r} is not a traces setting. Use one of: {_FORMS}.")


def _to_file(where: str) -> Tracing:
    if not where:
        raise ConfigError(f"{TRACES_SETTING}=file: needs a path, e.g. file:/var/log/consulta/traces.jsonl.")
    from ._jsonl import JsonLinesSpanExporter

    path = Path(where).expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        exporter = JsonLinesSpanExporter(path)
    except OSError as error:
        raise ConfigError(
            f"Traces cannot be written to {path}: {error.strerror or error}. Give {TRACES_SETTING}=file: a writable path."
        ) from None
    return Tracing(exporter=exporter, destination=str(path))


def _url(value: str, *, where: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"{where} must be an http(s) URL such as http://localhost:4318 (got {value!r}); traces go there over OTLP/HTTP."
        )
    return value.rstrip("/")


def _traces_path(base: str) -> str:
    """A collector's base URL with the traces path added (as for OTEL_EXPORTER_OTLP_ENDPOINT), unless it is there."""
    return base if base.endswith("/v1/traces") else f"{base}/v1/traces"


def _to_otlp(endpoint: str) -> Tracing:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return Tracing(exporter=OTLPSpanExporter(endpoint=endpoint), destination=endpoint)
