"""The ability estimate after each item of a test, with its uncertainty, drawn as an SVG image (`ability_svg`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from ...i18n import t
from ._test_views import Point

__all__ = ["ability_svg"]

# ---- the plot ---------------------------------------------------------------------------------------------------


def ability_svg(trajectory: Sequence[Point], *, lang: str, width: int = 640, height: int = 300) -> str:
    """The ability estimate after each item with its uncertainty (θ ± SE, a band), as an SVG image: item number
    across, θ up; each answer's point green (correct) or red (not). Words in `lang`."""
    left, right, top, bottom = 64, 16, 20, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    n = max(1, len(trajectory) - 1)
    lows = [p.theta - p.se for p in trajectory]
    highs = [p.theta + p.se for p in trajectory]
    lo = math.floor(min([-3.0, *lows]))
    hi = math.ceil(max([3.0, *highs]))

    def x(position: int) -> float:
        return left + plot_w * position / n

    def y(theta: float) -> float:
        return top + plot_h * (hi - theta) / (hi - lo)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(t("quiz.take.plot.title", lang))}" font-family="sans-serif" font-size="12">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    for tick in range(lo, hi + 1):
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="{"#9aa4b2" if tick == 0 else "#e3e7ee"}"/>'
        )
        parts.append(f'<text x="{left - 8}" y="{y(tick) + 4:.1f}" text-anchor="end" fill="#4a5568">{tick:+d}</text>')
    step = max(1, math.ceil(n / 12))
    for position in range(0, n + 1, step):
        parts.append(
            f'<text x="{x(position):.1f}" y="{height - bottom + 18}" text-anchor="middle" fill="#4a5568">{position}</text>'
        )
    band = [f"{x(p.position):.1f},{y(p.theta + p.se):.1f}" for p in trajectory]
    band += [f"{x(p.position):.1f},{y(p.theta - p.se):.1f}" for p in reversed(trajectory)]
    parts.append(f'<polygon points="{" ".join(band)}" fill="#3b82f6" fill-opacity="0.18" stroke="none"/>')
    line = " ".join(f"{x(p.position):.1f},{y(p.theta):.1f}" for p in trajectory)
    parts.append(f'<polyline points="{line}" fill="none" stroke="#1d4ed8" stroke-width="2"/>')
    for p in trajectory:
        colour = "#6b7280" if p.is_correct is None else "#16a34a" if p.is_correct else "#dc2626"
        parts.append(
            f'<circle cx="{x(p.position):.1f}" cy="{y(p.theta):.1f}" r="4" fill="{colour}"><title>'
            f"{escape(t('quiz.take.plot.point', lang, position=p.position, theta=p.theta, se=p.se))}</title></circle>"
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 8}" text-anchor="middle" fill="#1f2937">{escape(t("quiz.take.plot.x", lang))}</text>'
    )
    parts.append(
        f'<text x="16" y="{top + plot_h / 2:.1f}" text-anchor="middle" fill="#1f2937" '
        f'transform="rotate(-90 16 {top + plot_h / 2:.1f})">{escape(t("quiz.take.plot.y", lang))}</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts)
