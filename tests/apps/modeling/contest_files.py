"""Tiny contest-style problem files made in the tests themselves: a PDF whose pages hold lines of text (pypdf's own
writer, the standard Helvetica font, no font embedded), optionally password-protected, and an .xlsx workbook
(openpyxl's writer)."""

from __future__ import annotations

import io
from collections.abc import Sequence

from openpyxl import Workbook
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject


def pdf_bytes(
    pages: Sequence[Sequence[str]], *, user_password: str | None = None, owner_password: str | None = None
) -> bytes:
    """A PDF of `pages`, each a list of lines (Latin-1 text), encrypted when a password is given (an owner password
    alone: it opens without one, as such PDFs do in any viewer)."""
    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
    )
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        ops = ["BT", "/F1 11 Tf", "14 TL", "72 720 Td"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*")
        ops.append("ET")
        content = DecodedStreamObject()
        content.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(content)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
    if user_password is not None or owner_password is not None:
        writer.encrypt(user_password=user_password or "", owner_password=owner_password, algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def xlsx_bytes(sheets: dict[str, Sequence[Sequence[object]]]) -> bytes:
    """A workbook with a sheet of each name holding its rows (a value starting with `=` is a formula, saved without
    a computed value, as openpyxl saves it)."""
    book = Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(list(row))
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


ELEPHANTS = [
    [
        "2024 Problem A: Elephants of the park",
        "The park counts its elephants every year by age and by sex; the two tables of the attached workbook give",
        "the counts of the last two surveys.",
        "Task 1: Estimate the survival rate of each age class from the two tables of counts, and say how sure",
        "the estimate is.",
        "Task 2: How many elephants should be moved out of the park each year to keep the herd at 11000?",
    ],
    ["Task 3: Rank the three management policies below by the herd size they give after 20 years."],
]
"""The statement's pages: three tasks, two of them wrapped over two lines, the third on page 2."""
