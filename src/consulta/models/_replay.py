"""A finished `ModelResponse` told as a stream: for models that answer whole but should stream like any other."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime

from pydantic_ai.messages import ModelResponse, ModelResponseStreamEvent, TextPart
from pydantic_ai.models import StreamedResponse

__all__ = ["ReplayedStream"]


@dataclass
class ReplayedStream(StreamedResponse):
    """`_response` as a stream: each text part a word at a time (`word_delay_s` apart), every other part whole."""

    _response: ModelResponse
    word_delay_s: float = 0.0

    def __post_init__(self) -> None:
        self._usage = self._response.usage
        self.finish_reason = self._response.finish_reason

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        for index, part in enumerate(self._response.parts):
            if not isinstance(part, TextPart) or not part.content:
                yield self._parts_manager.handle_part(vendor_part_id=index, part=part)
                continue
            for word in filter(None, re.findall(r"\S*\s*", part.content)):
                if self.word_delay_s:
                    await asyncio.sleep(self.word_delay_s)
                for event in self._parts_manager.handle_text_delta(vendor_part_id=index, content=word):
                    yield event

    async def close_stream(self) -> None:
        pass  # nothing is left open: the response was complete before the stream was made

    @property
    def model_name(self) -> str:
        return self._response.model_name or ""

    @property
    def provider_name(self) -> str | None:
        return self._response.provider_name

    @property
    def provider_url(self) -> str | None:
        return None

    @property
    def timestamp(self) -> datetime:
        return self._response.timestamp
