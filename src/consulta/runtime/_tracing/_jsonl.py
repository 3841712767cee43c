"""A span exporter writing one JSON object a line to a file (the `file:` traces setting)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["JsonLinesSpanExporter"]


class JsonLinesSpanExporter(SpanExporter):
    """Appends each span to `path` as one line of JSON (the SDK's span JSON), in one write.

    The file is opened for appending, so processes sharing it add whole lines (a single write of a line to a file
    opened with O_APPEND is not interleaved with another's on a local file system).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._fd is None:
            return SpanExportResult.FAILURE
        for span in spans:
            os.write(self._fd, (span.to_json(indent=None) + "\n").encode("utf-8"))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # every line is written when exported
