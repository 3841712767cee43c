"""Test doubles of the site's look-ups (advisor-site's `_lookups`): a small synthetic data set, a switch to make
look-ups fail, the page context a page posted, and a count of each look-up made."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from consulta.apps.advisor import SiteLookupError

ADVISORS = [
    {"id": "12345", "name": "张三", "title": "教授", "rating": 4.5, "research_directions": ["机器学习", "深度学习"]},
    {"id": "12346", "name": "李四", "title": "副教授", "rating": 4.3, "research_directions": ["计算机视觉"]},
    {"id": "12347", "name": "王五", "title": "教授", "rating": 4.1, "research_directions": ["自然语言处理"]},
]


class FakeLookups:
    def __init__(self) -> None:
        self.fail = False
        self.calls: Counter[str] = Counter()
        self.pages: dict[str, dict[str, Any]] = {}
        self.empty_recommendations = False
        self.empty_ranking = False

    def _hit(self, name: str) -> None:
        self.calls[name] += 1
        if self.fail:
            raise SiteLookupError("the database is locked")

    def update_ranking(self, *, school: str, major: str) -> Mapping[str, Any]:
        self._hit("update_ranking")
        listed = [] if self.empty_ranking else [dict(a) for a in ADVISORS]
        return {"school": school, "major": major, "total": len(listed), "advisors": listed}

    def recommend_advisors(self, *, school: str, major: str, preferences: Mapping[str, Any]) -> Mapping[str, Any]:
        self._hit("recommend_advisors")
        if self.empty_recommendations:
            return {"advisors": []}
        wanted = preferences.get("research_direction")
        ranked = sorted(ADVISORS, key=lambda a: wanted not in a["research_directions"])
        return {"advisors": [dict(a) for a in ranked]}

    def get_advisor_detail(self, *, advisor_id: str) -> Mapping[str, Any]:
        self._hit("get_advisor_detail")
        found = next((a for a in ADVISORS if a["id"] == advisor_id), None)
        if found is None:
            raise SiteLookupError(f"no advisor {advisor_id}")
        return dict(found) | {"review_count": 12, "ratings": {"学术水平": 4.6, "师生关系": 4.4}}

    def get_advisor_reviews(self, *, advisor_id: str) -> Mapping[str, Any]:
        self._hit("get_advisor_reviews")
        return {
            "advisor_id": advisor_id,
            "reviews": [{"overall": 4.5, "text": "很好"}, {"overall": 4.0, "text": "不错"}],
        }

    def page_context(self, principal: str) -> dict[str, Any] | None:
        return self.pages.get(principal)


def ranking_page(
    advisors: list[dict[str, Any]] | None = None, *, selected: dict[str, Any] | None = None
) -> dict[str, Any]:
    shown = ADVISORS if advisors is None else advisors
    return {
        "current_page": "detail" if selected else "ranking",
        "visible_advisors": [
            {k: a[k] for k in ("id", "name", "title", "rating")} | {"rank": i + 1} for i, a in enumerate(shown)
        ],
        "selected_advisor": selected,
        "ranking_filters": {"school": "北京大学", "major": "计算机科学与技术"},
    }
