"""The paper to PDF, offline: `paper/paper.md` (Markdown, as the writer writes it) is converted by code into Typst
markup (`paper/paper.typ`) and compiled by the PyPI `typst` package (the Typst compiler in a wheel: no TeX, no
network, sub-second) into `paper/paper.pdf`, with the figures embedded.

Why Typst: it is maintained, ships as one wheel with its own fonts for Latin text and maths, embeds PNG/SVG figures
and needs nothing else at run time; pandoc + LaTeX would need a TeX installation. Chinese text needs a font with CJK
glyphs, which Typst does not bundle: the system's Noto CJK (Debian `fonts-noto-cjk`, installed by
`scripts/test-system-deps` and the README set-up) is used; when the paper has Chinese and no such font is found, the
error says so instead of writing a PDF of empty boxes.

Markdown handled: headings (a lone first `#` heading is the title), paragraphs, **bold**, *italic*, `code`, links,
images (a figure with its caption), pipe tables, bullet and numbered lists, block quotes, code blocks, rules, and
LaTeX maths (`$…$`, `$$…$$`) converted to Typst maths for the common commands; an equation Typst cannot read is kept
as its LaTeX text rather than failing the paper.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from ...runtime import ToolError
from ._files import write_atomic

__all__ = ["markdown_to_typst", "render_pdf"]

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
_CJK_FAMILIES = (
    "Noto Serif CJK SC",
    "Noto Sans CJK SC",
    "Source Han Serif SC",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "Droid Sans Fallback",
)
_FONT_DIRS = (
    "/usr/share/fonts/opentype/noto",
    "/usr/share/fonts/opentype/noto-cjk",
    "/usr/share/fonts/truetype/wqy",
    "/usr/share/fonts/truetype/droid",
)
_NUMBERED = re.compile(r"^\s*(?:figure|fig\.|图)\s*\d+\s*[:：.．]?\s*", re.I)
_ESCAPE = re.compile(r"([\\#$*_`<>@\[\]~/=+\-])")


def _escape(text: str) -> str:
    """Text as Typst markup shows it literally."""
    return _ESCAPE.sub(r"\\\1", text)


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---- maths --------------------------------------------------------------------------------------------------------

_GREEK = "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega".split()
_SYMBOLS = {
    "cdot": "dot", "times": "times", "leq": "<=", "le": "<=", "geq": ">=", "ge": ">=", "neq": "!=", "ne": "!=", "approx": "approx",
    "infty": "infinity", "to": "->", "rightarrow": "->", "leftarrow": "<-", "Rightarrow": "=>", "in": "in", "sum": "sum", "prod": "product",
    "int": "integral", "partial": "diff", "nabla": "nabla", "pm": "plus.minus", "mid": "|", "ldots": "dots", "cdots": "dots.c", "dots": "dots",
    "log": "log", "ln": "ln", "exp": "exp", "max": "max", "min": "min", "sin": "sin", "cos": "cos", "lim": "lim", "forall": "forall",
    "exists": "exists", "quad": "quad", "qquad": "wide", ",": "thin", ";": "med", "!": "", "left": "", "right": "", "big": "", "Big": "",
    "sim": "tilde.op", "propto": "prop", "circ": "circle.small", "prime": "prime", "percent": "%", "%": "%", "{": "{", "}": "}",
    "arg": "arg", "det": "det", "Pr": "Pr",
}  # fmt: skip
_WRAPPERS = {
    "hat": "hat",
    "bar": "overline",
    "overline": "overline",
    "tilde": "tilde",
    "vec": "arrow",
    "dot": "dot",
    "sqrt": "sqrt",
    "mathbf": "bold",
    "boldsymbol": "bold",
    "mathbb": "bb",
    "mathcal": "cal",
}


def _group(latex: str, start: int) -> tuple[str, int]:
    """The `{…}` group (or the single character) at `start`: its content and the index after it."""
    while start < len(latex) and latex[start] == " ":
        start += 1
    if start >= len(latex):
        return "", start
    if latex[start] != "{":
        if latex[start] == "\\":
            match = re.match(r"\\([A-Za-z]+|.)", latex[start:])
            assert match is not None
            return match.group(), start + len(match.group())
        return latex[start], start + 1
    depth = 0
    for i in range(start, len(latex)):
        depth += {"{": 1, "}": -1}.get(latex[i], 0)
        if depth == 0:
            return latex[start + 1 : i], i + 1
    return latex[start + 1 :], len(latex)


def latex_to_typst_math(latex: str) -> str:
    """Common LaTeX maths as Typst maths (fractions, sub/superscripts, Greek, operators, accents, \\text)."""
    out: list[str] = []
    i = 0
    while i < len(latex):
        c = latex[i]
        if c == "\\":
            match = re.match(r"\\([A-Za-z]+|.)", latex[i:])
            assert match is not None
            name = match.group(1)
            i += len(match.group())
            if name in ("frac", "dfrac", "tfrac"):
                top, i = _group(latex, i)
                bottom, i = _group(latex, i)
                out.append(f" ({latex_to_typst_math(top)})/({latex_to_typst_math(bottom)}) ")
            elif name in ("text", "mathrm", "operatorname", "textrm", "mbox"):
                body, i = _group(latex, i)
                out.append(f" upright({_string(body)}) " if name != "text" else f" {_string(body)} ")
            elif name in _WRAPPERS:
                body, i = _group(latex, i)
                out.append(f" {_WRAPPERS[name]}({latex_to_typst_math(body)}) ")
            elif name in _GREEK:
                out.append(
                    f" {name.replace('var', '').replace('epsilon', 'epsilon.alt') if name.startswith('var') else name} "
                )
            elif name in _SYMBOLS:
                out.append(f" {_SYMBOLS[name]} ")
            else:
                out.append(f" {name} ")
        elif c in "_^":
            body, i = _group(latex, i + 1)
            out.append(f"{c}({latex_to_typst_math(body)})")
        elif c in "{}":
            out.append("(" if c == "{" else ")")
            i += 1
        elif c.isalpha():
            word = re.match(r"[A-Za-z]+", latex[i:])
            assert word is not None
            out.append(" " + " ".join(word.group()) + " ")  # LaTeX's `ab` is a times b; Typst reads it as one name
            i += len(word.group())
        elif c == '"':
            out.append('\\"')
            i += 1
        elif c in "#$;&":
            out.append("\\" + c if c != "&" else " ")
            i += 1
        else:
            out.append(c)
            i += 1
    return re.sub(r"\s+", " ", "".join(out)).strip()


# ---- inline and blocks --------------------------------------------------------------------------------------------

_INLINE = re.compile(
    r"`(?P<code>[^`]+)`|\$(?P<math>[^$\n]+)\$|!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)[^)]*\)|\[(?P<label>[^\]]+)\]\((?P<href>[^)\s]+)\)"
    r"|\*\*(?P<strong>.+?)\*\*|__(?P<strong2>.+?)__|\*(?P<em>[^*\s][^*]*?)\*|(?<![A-Za-z0-9])_(?P<em2>[^_\s][^_]*?)_(?![A-Za-z0-9])"
)


class _Converter:
    def __init__(self, paper_dir: Path, root: Path, *, raw_math: bool) -> None:
        self.paper_dir = paper_dir
        self.root = root
        self.raw_math = raw_math
        self.figures: list[str] = []

    def math(self, latex: str, *, block: bool) -> str:
        if self.raw_math:
            return f"#raw({_string(latex.strip())}, block: {'true' if block else 'false'})"
        body = latex_to_typst_math(latex)
        return f"$ {body} $" if block else f"${body}$"

    def image(self, src: str, caption: str) -> str:
        path = (self.paper_dir / src).resolve()
        if not path.is_file():
            path = (self.root / src).resolve()
        if not path.is_relative_to(self.root) or not path.is_file():
            raise ToolError(
                "figure_missing",
                f"The paper embeds {src}, which is not a file of the run's workspace.",
                hint="Make the figure (figures/<name>.png) or correct the path.",
                field="paper",
            )
        self.figures.append(path.relative_to(self.root).as_posix())
        caption = _NUMBERED.sub("", caption)  # Typst numbers the figure itself
        return f"#figure(image({_string(os.path.relpath(path, self.paper_dir))}, width: 85%), caption: [{self.inline(caption)}])"

    def inline(self, text: str) -> str:
        out, last = [], 0
        for match in _INLINE.finditer(text):
            out.append(_escape(text[last : match.start()]))
            last = match.end()
            group = match.lastgroup
            value = match.group(group) if group else ""
            if group == "code":
                out.append(f"#raw({_string(value)})")
            elif group == "math":
                out.append(self.math(value, block=False))
            elif group == "src":
                out.append(self.image(match.group("src"), match.group("alt")))
            elif group == "href":
                out.append(f"#link({_string(match.group('href'))})[{self.inline(match.group('label'))}]")
            elif group in ("strong", "strong2"):
                out.append(f"#strong[{self.inline(value)}]")
            elif group in ("em", "em2"):
                out.append(f"#emph[{self.inline(value)}]")
        out.append(_escape(text[last:]))
        return "".join(out)

    def table(self, rows: list[str]) -> str:
        cells = [[c.strip() for c in row.strip().strip("|").split("|")] for row in rows]
        header, body = (
            cells[0],
            [r for r in cells[2:]] if len(cells) > 1 and re.fullmatch(r"[\s:|-]+", rows[1]) else cells[1:],
        )
        width = len(header)
        items = [f"[#strong[{self.inline(c)}]]" for c in header]
        for row in body:
            row = (row + [""] * width)[:width]
            items += [f"[{self.inline(c)}]" for c in row]
        return f"#align(center, table(columns: {width}, align: left, stroke: 0.5pt, {', '.join(items)}))"


def markdown_to_typst(markdown: str, *, paper_dir: Path, root: Path, raw_math: bool = False) -> str:
    """The Typst markup of a Markdown paper whose figures are found relative to `paper_dir` inside `root` (a figure
    outside `root` or missing is a ToolError `figure_missing`). With `raw_math`, equations are shown as their LaTeX."""
    conv = _Converter(paper_dir.resolve(), root.resolve(), raw_math=raw_math)
    lines = markdown.replace("\r\n", "\n").split("\n")
    headings = [line for line in lines if re.match(r"^#{1,6}\s", line)]
    title_first = bool(headings) and headings[0].startswith("# ") and sum(h.startswith("# ") for h in headings) == 1
    blocks: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            blocks.append(conv.inline(" ".join(s.strip() for s in paragraph)))
            paragraph.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        fence = re.match(r"^\s*(```|~~~)\s*([\w+-]*)", line)
        if fence:
            flush()
            body, i = [], i + 1
            while i < len(lines) and not lines[i].strip().startswith(fence.group(1)):
                body.append(lines[i])
                i += 1
            lang = f", lang: {_string(fence.group(2))}" if fence.group(2) else ""
            blocks.append(f"#raw({_string(chr(10).join(body))}, block: true{lang})")
            i += 1
            continue
        if stripped.startswith("$$"):
            flush()
            body = [stripped[2:]]
            while not body[-1].rstrip().endswith("$$") and i + 1 < len(lines):
                i += 1
                body.append(lines[i])
            blocks.append(conv.math(" ".join(body).strip().removesuffix("$$"), block=True))
            i += 1
            continue
        heading = re.match(r"^(#{1,6})\s+(.*?)\s*#*$", line)
        if heading:
            flush()
            level = len(heading.group(1))
            text = conv.inline(heading.group(2))
            if title_first and level == 1:
                blocks.append(f'#align(center, text(size: 17pt, weight: "bold")[{text}])')
            else:
                blocks.append("=" * max(1, level - 1 if title_first else level) + " " + text)
            i += 1
            continue
        if not stripped:
            flush()
            i += 1
            continue
        if re.fullmatch(r"(-{3,}|\*{3,}|_{3,})", stripped):
            flush()
            blocks.append("#line(length: 100%, stroke: 0.4pt)")
            i += 1
            continue
        image = re.fullmatch(r"!\[([^\]]*)\]\(([^)\s]+)[^)]*\)", stripped)
        if image:
            flush()
            blocks.append(conv.image(image.group(2), image.group(1)))
            i += 1
            continue
        if stripped.startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|?[\s:|-]+\|?", lines[i + 1].strip()):
            flush()
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(lines[i])
                i += 1
            blocks.append(conv.table(rows))
            continue
        item = re.match(r"^(\s*)([-*+]|\d+[.)])\s+(.*)$", line)
        if item:
            flush()
            indent = "  " * (len(item.group(1).expandtabs(4)) // 2)
            marker = "-" if item.group(2) in "-*+" else "+"
            blocks.append(f"{indent}{marker} {conv.inline(item.group(3))}")
            i += 1
            continue
        if stripped.startswith(">"):
            flush()
            quoted = []
            while i < len(lines) and lines[i].strip().startswith(">"):
                quoted.append(lines[i].strip()[1:].strip())
                i += 1
            blocks.append(f"#quote(block: true)[{conv.inline(' '.join(quoted))}]")
            continue
        paragraph.append(line)
        i += 1
    flush()
    joined = []
    for block in blocks:  # list items stay together; other blocks are separated by a blank line
        is_item = bool(re.match(r"^\s*[-+] ", block))
        if joined and not (is_item and re.match(r"^\s*[-+] ", joined[-1])):
            joined.append("")
        joined.append(block)
    return "\n".join(joined) + "\n"


def _preamble(cjk: bool) -> str:
    fonts = ", ".join(_string(f) for f in ("Libertinus Serif", *_CJK_FAMILIES))
    lang = 'lang: "zh", region: "cn", ' if cjk else 'lang: "en", '
    return (
        f"#set text(font: ({fonts}), {lang}size: 10.5pt)\n"
        '#set page(paper: "a4", margin: 2.2cm, numbering: "1")\n'
        "#set par(justify: true)\n"  # headings unnumbered here: the paper numbers its sections itself ("## 1 …")
        '#show raw: set text(font: ("DejaVu Sans Mono", ' + ", ".join(_string(f) for f in _CJK_FAMILIES) + "))\n\n"
    )


def _fonts():  # noqa: ANN202 - a typst.Fonts
    import typst

    return typst.Fonts(
        include_system_fonts=True, include_embedded_fonts=True, font_paths=[d for d in _FONT_DIRS if Path(d).is_dir()]
    )


def render_pdf(workspace: Path) -> Path:
    """Render `paper/paper.md` of `workspace` to `paper/paper.pdf` (and `paper/paper.typ`, the markup it came from),
    both written atomically; returns the PDF's path. ToolError: `paper_missing`, `figure_missing` (a figure not in
    the workspace), `no_cjk_font` (Chinese text and no font for it), `paper_render_failed` (Typst's message)."""
    import typst

    workspace = Path(workspace).resolve()
    paper_dir = workspace / "paper"
    source = paper_dir / "paper.md"
    if not source.is_file():
        raise ToolError(
            "paper_missing",
            "paper/paper.md does not exist.",
            hint="Write the paper as Markdown in paper/paper.md first.",
            field="paper",
        )
    markdown = source.read_text(encoding="utf-8", errors="replace")
    fonts = _fonts()
    cjk = bool(_CJK.search(markdown))
    if cjk and not set(_CJK_FAMILIES) & set(fonts.families()):
        raise ToolError(
            "no_cjk_font",
            "The paper has Chinese text and no font with Chinese glyphs is installed.",
            hint="Install Debian's fonts-noto-cjk (scripts/test-system-deps does) and render again.",
            field="paper",
        )
    error: Exception | None = None
    for raw_math in (False, True):  # an equation Typst cannot read: show the LaTeX rather than fail the paper
        markup = _preamble(cjk) + markdown_to_typst(markdown, paper_dir=paper_dir, root=workspace, raw_math=raw_math)
        fd, temp = tempfile.mkstemp(
            dir=paper_dir, prefix=".paper.", suffix=".typ"
        )  # next to paper.md: figure paths hold
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(markup.encode("utf-8"))
            pdf = typst.Compiler(root=str(workspace), font_paths=fonts).compile(input=temp, format="pdf")
        except typst.TypstError as failed:
            error = failed
            continue
        finally:
            Path(temp).unlink(missing_ok=True)
        assert isinstance(pdf, bytes)
        write_atomic(paper_dir / "paper.typ", markup.encode("utf-8"))
        write_atomic(paper_dir / "paper.pdf", pdf)
        return paper_dir / "paper.pdf"
    message = getattr(error, "message", str(error))
    raise ToolError(
        "paper_render_failed",
        f"Typst could not render the paper: {message}",
        hint="Simplify the Markdown around the place named.",
        field="paper",
    )
