"""The tutor over MCP: how its tools go together when a client's model drives them, and the tools a client needs
besides the orchestrator's own — putting the student's file in the upload folder, and listing it."""

from __future__ import annotations

import base64
import binascii
from typing import Any, Literal

from ...runtime import ToolDef, ToolError
from .._def import AppView
from ._datasets import MAX_UPLOAD_BYTES
from ._uploads import FIELD, list_uploads, save_upload

__all__ = ["INSTRUCTIONS", "tools"]

INSTRUCTIONS = """
Over MCP: put the student's dataset in the upload folder with upload_dataset (its file name and content: the text \
of a CSV/TSV file, or base64 for Excel), see the folder with list_uploads, then consult_expert about it (the \
consultation and its binding rules are on record) and submit_instruction_packet carrying every instruction update \
the consultations returned.
"""

_MAX_BASE64 = (MAX_UPLOAD_BYTES + 2) // 3 * 4
"""The longest base64 text of a file within the limit."""


def tools(host: AppView) -> list[ToolDef]:
    """upload_dataset and list_uploads over the host's upload folder."""

    def folder() -> Any:
        path = host.data_path
        assert path is not None  # the tutor always has one
        return path

    async def upload_dataset(name: str, content: str, encoding: Literal["text", "base64"] = "text") -> dict[str, Any]:
        """Put a file in the student's upload folder (a file of that name is replaced). Refused, with nothing written:
        a name with a folder part or a leading dot, a type other than CSV/TSV/Excel, an empty file, a file over the
        size limit.

        Args:
            name: The file's name, e.g. student_data.csv.
            content: The file's content: its text (encoding "text", UTF-8), or base64 (encoding "base64").
            encoding: "text" or "base64".
        """
        if len(content) > (_MAX_BASE64 if encoding == "base64" else MAX_UPLOAD_BYTES):  # before decoding anything
            raise ToolError("file_too_large", f"{name} is over {MAX_UPLOAD_BYTES // (1024 * 1024)} MB.", field=FIELD)
        if encoding == "base64":
            try:
                data = base64.b64decode(content, validate=True)
            except (binascii.Error, ValueError):
                raise ToolError(
                    "invalid_base64",
                    "content is not valid base64.",
                    hint='Send the bytes as base64, or text with encoding "text".',
                    field="content",
                ) from None
        else:
            data = content.encode("utf-8")
        saved = save_upload(folder(), name, data)
        return {
            "ok": True,
            "file": saved.model_dump(),
            "message": f"{saved.name} is in the upload folder ({saved.size} bytes).",
        }

    async def list_uploads_tool() -> dict[str, Any]:
        """The files in the student's upload folder (name, size in bytes, when written)."""
        return {"files": [f.model_dump() for f in list_uploads(folder())]}

    return [
        ToolDef(
            name="upload_dataset", function=upload_dataset, description=(upload_dataset.__doc__ or "").split("\n\n")[0]
        ),
        ToolDef(name="list_uploads", function=list_uploads_tool, description=(list_uploads_tool.__doc__ or "").strip()),
    ]
