"""Tiny contest-style problem files made in the tests themselves: a PDF whose pages hold lines of text in any script
(pypdf's own writer; the text drawn in a font that maps each character code to its Unicode character, as a PDF with a
CJK font does, with no glyphs embedded: what a reader extracts is the text, whatever is drawn), optionally
password-protected, and an .xlsx workbook (openpyxl's writer)."""

from __future__ import annotations

import io
from collections.abc import Sequence

from openpyxl import Workbook
from pypdf import PdfWriter
from pypdf.generic import (
    ArrayObject,
    DecodedStreamObject,
    DictionaryObject,
    NameObject,
    NumberObject,
    TextStringObject,
)


def _stream(data: bytes) -> DecodedStreamObject:
    stream = DecodedStreamObject()
    stream.set_data(data)
    return stream


def _to_unicode(codes: dict[str, int]) -> bytes:
    """The CMap mapping each character code (two bytes) to its character."""
    lines = ["/CIDInit /ProcSet findresource begin", "12 dict begin", "begincmap", "/CMapName /Fixture def"]
    lines += ["/CMapType 2 def", "1 begincodespacerange", "<0000> <FFFF>", "endcodespacerange"]
    pairs = list(codes.items())
    for start in range(0, len(pairs), 100):
        chunk = pairs[start : start + 100]
        lines.append(f"{len(chunk)} beginbfchar")
        lines += [f"<{code:04X}> <{char.encode('utf-16-be').hex().upper()}>" for char, code in chunk]
        lines.append("endbfchar")
    lines += ["endcmap", "CMapName currentdict /CMap defineresource pop", "end", "end"]
    return "\n".join(lines).encode("ascii")


def pdf_bytes(
    pages: Sequence[Sequence[str]], *, user_password: str | None = None, owner_password: str | None = None
) -> bytes:
    """A PDF of `pages`, each a list of lines, encrypted (AES-128) when a password is given (an owner password
    alone: it opens without one, as such PDFs do in any viewer)."""
    writer = PdfWriter()
    codes = {char: n for n, char in enumerate(sorted({c for page in pages for line in page for c in line}), start=1)}
    system = {
        "/Registry": TextStringObject("Adobe"),
        "/Ordering": TextStringObject("Identity"),
        "/Supplement": NumberObject(0),
    }
    descendant = {
        "/Type": NameObject("/Font"),
        "/Subtype": NameObject("/CIDFontType2"),
        "/BaseFont": NameObject("/Fixture"),
        "/CIDSystemInfo": DictionaryObject({NameObject(k): v for k, v in system.items()}),
        "/DW": NumberObject(1000),
    }
    font = {
        "/Type": NameObject("/Font"),
        "/Subtype": NameObject("/Type0"),
        "/BaseFont": NameObject("/Fixture"),
        "/Encoding": NameObject("/Identity-H"),
        "/DescendantFonts": ArrayObject(
            [writer._add_object(DictionaryObject({NameObject(k): v for k, v in descendant.items()}))]
        ),
        "/ToUnicode": writer._add_object(_stream(_to_unicode(codes))),
    }
    font_ref = writer._add_object(DictionaryObject({NameObject(k): v for k, v in font.items()}))
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        ops = ["BT", "/F1 10 Tf", "14 TL", "40 740 Td"]
        ops += ["<" + "".join(f"{codes[c]:04X}" for c in line) + "> Tj T*" for line in lines]
        ops.append("ET")
        page[NameObject("/Contents")] = writer._add_object(_stream("\n".join(ops).encode("ascii")))
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font_ref})}
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

XIANG = [
    [
        "2024 年数学建模竞赛 A 题：象群管理",
        "某自然保护区每年按年龄和性别统计大象的数量，附件中的两张表给出了最近两次调查的结果。保护区希望通过每年",
        "迁出一定数量的大象来控制象群规模。",
        "问题1：根据两张表中的数据，估计各年龄段大象的存活率，并说明估计的可靠程度和可能的误差",
        "来源。",
        "问题2：为了使象群规模保持在 11000 头左右，保护区每年应迁出多少头大象？",
    ]
]
"""A statement in Chinese: two tasks, the first wrapped over two lines."""
