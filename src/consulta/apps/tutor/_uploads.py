"""A student's file put into the upload folder by a front end (web, desktop, MCP, the terminal's `--file`): checked
with the folder's own rules (a plain file name, an accepted type, at most MAX_UPLOAD_BYTES) before a byte is written,
counted while it is written, its content checked before it is put in place (a CSV/TSV is UTF-8 text with rows as
wide as its header; an Excel file is a workbook that does not unpack past MAX_UNPACKED_BYTES), and put in place
atomically — a refused or broken upload leaves nothing behind.

A refusal is an `UploadRefused`: a ToolError (its code, an English message and hint, field `file`) for the model and
the API, and a ConsultaError whose `localized(lang)` is one line in the person's language (the catalog's
`tutor.web.error.<code>`, the words the web page and the desktop use too)."""

from __future__ import annotations

import codecs
import csv
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from pydantic import BaseModel

from ...i18n import catalog, normalize_lang, t
from ...runtime import ConsultaError, ToolError
from .._uploads import FileUpload
from ._datasets import (
    ACCEPTED_SUFFIXES,
    MAX_UPLOAD_BYTES,
    check_file_name,
    check_file_size,
    check_file_type,
    holds_json,
    uploaded_files,
)

__all__ = [
    "FIELD",
    "MAX_UNPACKED_BYTES",
    "UploadRefused",
    "UploadWriter",
    "UploadedFile",
    "check_upload",
    "copy_upload",
    "list_uploads",
    "save_upload",
]

FIELD = "file"
"""The field an upload's errors name (the file a person picked)."""
MAX_UNPACKED_BYTES = 10 * MAX_UPLOAD_BYTES
"""What an Excel workbook (a zip) may unpack to: a few kB can unpack to gigabytes (a zip bomb)."""
_MAX_MEMBERS = 10_000
# A single value may be as long as a whole upload: the csv module's default (pandas' python engine, which sniffs a
# .txt/.dat file's separator, reads with it) stops at 128 kB.
csv.field_size_limit(max(csv.field_size_limit(), MAX_UPLOAD_BYTES))
_CHUNK = 1024 * 1024
_TEXT_SUFFIXES = (".csv", ".tsv", ".txt", ".dat")
_XLS_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # the OLE2 container of Excel 97-2003 files
_OTHER_ENCODINGS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


class UploadRefused(ToolError, ConsultaError):
    """An upload refused, nothing written. `error_code` is one of `missing_file_name`, `path_outside_uploads`,
    `unsupported_file_type`, `file_too_large`, `empty_file`, `not_text`, `invalid_encoding`, `no_rows`,
    `not_a_workbook`, `unpacks_too_large`."""

    code = "upload_refused"

    def __init__(
        self,
        error_code: str,
        message: str,
        *,
        name: str,
        hint: str | None = None,
    ) -> None:
        super().__init__(error_code, message, hint=hint, field=FIELD)
        self.name = name

    @classmethod
    def of(cls, error: ToolError, name: str) -> UploadRefused:
        """A check's ToolError as a refusal of the upload `name`."""
        return (
            error
            if isinstance(error, UploadRefused)
            else cls(error.error_code, error.message, name=name, hint=error.hint)
        )

    def localized(self, lang: str) -> str:
        key = f"tutor.web.error.{self.error_code}"
        if key not in catalog(normalize_lang(lang)):
            return str(self)
        types = t("web.list_separator", lang).join(ACCEPTED_SUFFIXES)
        limit = f"{MAX_UPLOAD_BYTES // (1024 * 1024)} MB"
        return t(key, lang, name=self.name, limit=limit, types=types)

    def __str__(self) -> str:
        return f"{self.message} {self.hint}" if self.hint else self.message


class UploadedFile(BaseModel):
    """A file of the upload folder."""

    name: str
    size: int
    modified: str
    """When it was last written (ISO 8601, UTC)."""


def _described(path: Path) -> UploadedFile:
    stat = path.stat()
    return UploadedFile(
        name=path.name, size=stat.st_size, modified=datetime.fromtimestamp(stat.st_mtime, UTC).isoformat()
    )


def list_uploads(folder: Path) -> list[UploadedFile]:
    """The folder's files, by name."""
    return [_described(folder / name) for name in uploaded_files(folder)]


def check_upload(name: str | None, size: int | None = None) -> str:
    """`name` if a file of that name (and `size` bytes, when known) may be uploaded; else UploadRefused:
    `missing_file_name`, `path_outside_uploads`, `unsupported_file_type`, `file_too_large`."""
    if not name:
        raise UploadRefused("missing_file_name", "The upload has no file name.", name="", hint="Pick a file to upload.")
    try:
        check_file_name(name, field=FIELD)
        check_file_type(name, field=FIELD)
        if size is not None:
            check_file_size(name, size, field=FIELD)
    except ToolError as error:
        raise UploadRefused.of(error, name) from None
    return name


def check_content(path: Path, name: str) -> None:
    """The content of the file at `path` (to be uploaded as `name`) fits its type, else UploadRefused: a text table
    (.csv, .tsv, .txt, .dat) is UTF-8 text (`not_text`, `invalid_encoding`) with a header and at least one more line
    (`no_rows`); an .xlsx is a workbook that unpacks to at most
    MAX_UNPACKED_BYTES (`not_a_workbook`, `unpacks_too_large`); an .xls is an Excel 97-2003 file."""
    suffix = Path(name).suffix.lower()
    if suffix in _TEXT_SUFFIXES:
        _check_text(path, name)
        _check_has_rows(path, name)
    elif suffix == ".xlsx":
        _check_workbook(path, name)
    elif suffix == ".xls":
        with path.open("rb") as handle:
            if handle.read(len(_XLS_MAGIC)) != _XLS_MAGIC:
                raise _not_a_workbook(name)


def _check_text(path: Path, name: str) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, line = 0, 1
    with path.open("rb") as handle:
        first = True
        while chunk := handle.read(_CHUNK):
            if first:
                for bom, encoding in _OTHER_ENCODINGS:
                    if chunk.startswith(bom):
                        raise _not_utf8(name, f"{name} is {encoding} text, not UTF-8.")
                first = False
            if (nul := chunk.find(b"\x00")) >= 0:
                raise UploadRefused(
                    "not_text",
                    f"{name} is not a text file (binary data at byte {offset + nul}).",
                    name=name,
                    hint="Upload the table itself as CSV or TSV text, or an Excel file as .xlsx.",
                )
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as error:
                at = max(offset + error.start, 0)
                where = line + chunk[: max(error.start, 0)].count(b"\n")
                raise _not_utf8(name, f"{name} is not UTF-8 text (line {where}, byte {at}).") from None
            offset += len(chunk)
            line += chunk.count(b"\n")
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise _not_utf8(name, f"{name} is not UTF-8 text (it ends inside a character).") from None


def _not_utf8(name: str, message: str) -> UploadRefused:
    return UploadRefused(
        "invalid_encoding",
        message,
        name=name,
        hint="Save it as UTF-8 (in Excel: Save As › CSV UTF-8) and upload it again.",
    )


def _check_has_rows(path: Path, name: str) -> None:
    """A header line and at least one more line that is not blank (`no_rows`). Whether the lines make a table is not
    refused here: a file pandas cannot read, or reads oddly, is the student's problem the tutor is there to help with
    (the data inspector says what it found, e.g. the line where the rows stop being alike)."""
    lines = 0
    with path.open(encoding="utf-8-sig") as handle:
        for line in handle:
            lines += bool(line.strip())
            if lines == 2:
                return
    if lines == 1 and holds_json(path):
        return  # records saved as JSON under a table's name: the tutor's check says what the file holds
    what = "only a header" if lines else "no header and no rows"
    raise UploadRefused(
        "no_rows",
        f"{name} has {what}: there is no data in it.",
        name=name,
        hint="Upload the file with the rows of data in it.",
    )


def _check_workbook(path: Path, name: str) -> None:
    try:
        with zipfile.ZipFile(path) as workbook:
            members = workbook.infolist()
            if len(members) > _MAX_MEMBERS or sum(m.file_size for m in members) > MAX_UNPACKED_BYTES:
                raise UploadRefused(
                    "unpacks_too_large",
                    f"{name} unpacks to more than {MAX_UNPACKED_BYTES // (1024 * 1024)} MB.",
                    name=name,
                    hint="Upload the sheet with the data alone, or save it as CSV.",
                )
            if "xl/workbook.xml" not in workbook.namelist():
                raise _not_a_workbook(name)
    except (zipfile.BadZipFile, OSError, ValueError):
        raise _not_a_workbook(name) from None


def _not_a_workbook(name: str) -> UploadRefused:
    return UploadRefused(
        "not_a_workbook",
        f"{name} is not an Excel workbook.",
        name=name,
        hint="Open it in Excel and save it as .xlsx, or upload the table as CSV.",
    )


class UploadWriter:
    """One upload being written into `folder` as `name` (checked at once: nothing is written for a refused name), a
    `FileUpload` (the apps' shared mechanics: chunks into a hidden temporary file, the chunk that takes it over the
    limit refused, content checked by `check_content`, put in place atomically); used as a context manager, an
    upload not committed is removed."""

    def __init__(self, folder: Path, name: str | None, *, limit: int = MAX_UPLOAD_BYTES) -> None:
        self.name = check_upload(name)
        self.folder = folder
        self.limit = limit
        self._upload = FileUpload(folder, self.name, limit=limit, refuse=self._refuse, check=check_content)

    def _refuse(self, code: str, message: str, hint: str | None) -> UploadRefused:
        return UploadRefused(code, message, name=self.name, hint=hint)

    @property
    def size(self) -> int:
        return self._upload.size

    def write(self, chunk: bytes) -> None:
        self._upload.write(chunk)

    def commit(self) -> UploadedFile:
        return _described(self._upload.commit())

    def abort(self) -> None:
        """Drop what was written (idempotent)."""
        self._upload.abort()

    def __enter__(self) -> UploadWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._upload.__exit__(kind, error, tb)


def save_upload(folder: Path, name: str | None, data: bytes) -> UploadedFile:
    """Put `data` in the upload folder as `name` (the checks of `UploadWriter`)."""
    check_upload(name, len(data))
    with UploadWriter(folder, name) as writer:
        writer.write(data)
        return writer.commit()


def copy_upload(folder: Path, source: Path) -> str:
    """Copy the file `source` into the upload folder under its own name: checked (name, type, size) before a byte is
    read, copied in chunks with the limit held while copying (the file may grow), content checked, put in place
    atomically. Returns the name. UploadRefused, or OSError when `source` cannot be read."""
    check_upload(source.name, source.stat().st_size)
    with UploadWriter(folder, source.name) as writer, source.open("rb") as data:
        while chunk := data.read(_CHUNK):
            writer.write(chunk)
        return writer.commit().name
