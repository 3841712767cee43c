"""Run in a subprocess under Xvfb by test_xvfb.py: open one app's desktop window (scripted model), bring its own panels
to what a person sees at work, and save screenshots of the whole X screen; then close the window gracefully.

- quiz: an item answered with its feedback, then the results (θ ± SE, the plot, the review);
- advisor: a real turn of its agent (the ranking for 北京大学 计算机) with the advisor a reply names marked, then the
  advisor's detail;
- modeling: the timeline and the escalation's question dialog over a made workspace;
- tutor: the uploads panel, its main tab.

Usage: python _screenshot_panels.py APP HOME LANG OUT_PREFIX   (writes OUT_PREFIX-<shot>.png; exit 0 = saved, closed)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the tests' own helpers

from consulta.config import Settings  # noqa: E402
from consulta.frontends.qt import MainWindow  # noqa: E402
from consulta.runtime import RunEnded  # noqa: E402
from frontends.qt._workspace import SAMPLE, TEST_APP, build_workspace, run_folder  # noqa: E402

LIMIT_MS = 90_000
SETTLE_MS = 700  # let the X server draw what changed before reading the screen
# the question in the person's language (the runtime refuses an English one asked of a person writing Chinese)
ESCALATE = {
    "en": {"header": "Gate", "question": "code_runs was rejected 3 times. Accept it as it is, or stop?",
           "options": ["accept", "stop"]},
    "zh-CN": {"header": "关卡", "question": "code_runs 已被驳回 3 次。按现状接受，还是停止？",
              "options": ["接受", "停止"]},
}  # fmt: skip
SOLVE = {"en": "Solve the problem.", "zh-CN": "请解决这个问题。"}
ASK = {"en": "I want to study computer science at Peking University", "zh-CN": "我想考北京大学计算机系"}


def main() -> int:
    app_name, home, lang, prefix = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    script = home / "script.json"
    escalate = {"tool_calls": [{"name": "question", "args": {"questions": [ESCALATE[lang]]}}]}
    steps: list[Any] = [escalate, {"text": "Stopped."}] if app_name == "modeling" else []
    script.write_text(json.dumps(steps), encoding="utf-8")
    settings = Settings(home=home, database_url=f"sqlite:///{home}/consulta.db", model=f"scripted:{script}", lang=lang)
    qt = QApplication(sys.argv[:1])
    app: Any = TEST_APP if app_name == "modeling" else app_name
    options = {"problem": str(SAMPLE)} if app_name == "modeling" else None
    window = MainWindow(app=app, settings=settings, options=options)
    window.setGeometry(QGuiApplication.primaryScreen().geometry())  # no window manager here to maximise it
    window.show()
    outcome = {"code": 3}
    plan: list[tuple[Callable[[], bool], Callable[[], None]]] = []

    def shoot(name: str) -> Callable[[], None]:
        def take() -> None:
            if not QGuiApplication.primaryScreen().grabWindow(0).save(f"{prefix}-{name}.png", "PNG"):
                outcome["code"] = 4

        return take

    def own() -> Any:
        return next(p.widget for p in window.panels if p.placement == "tab")

    def send(text: str) -> None:
        window.chat.input.setText(text)
        window.chat.send_button.click()

    if app_name == "quiz":

        def start() -> None:
            test = own()
            test.role.setText("数据分析师" if lang == "zh-CN" else "Data analyst")
            test.duty.setText("写销售报表" if lang == "zh-CN" else "Reports on sales")
            test.interests.setText("SQL, statistics")
            test.start_button.click()

        def answer() -> None:
            test = own()
            if test.test.item.item_type == "short_answer":
                test.text_answer.setText("a join combines rows of two tables on a key")
            else:
                test.choices.buttons()[0].setChecked(True)
            test.submit_button.click()

        def next_or_answer() -> None:
            test = own()
            test.next_button.click()
            if test.test.status == "in_progress":
                QTimer.singleShot(50, answer)

        plan += [
            (lambda: window.panels_ready, start),
            (lambda: own().test is not None and own().test.item is not None, answer),
            (lambda: own().feedback is not None and own().next_button.isVisible(), shoot("feedback")),
        ]
        for _ in range(60):  # answer to the end
            plan.append((lambda: own().feedback is not None or own().pages.currentWidget() is own().results_page,
                         lambda: next_or_answer() if own().feedback is not None else None))  # fmt: skip
        plan.append((lambda: own().pages.currentWidget() is own().results_page, shoot("results")))
    elif app_name == "advisor":

        def name_first() -> None:
            site = own()
            first = site.ranking.advisors[0]
            words = f"{first.name}老师的学生评价很高。" if lang == "zh-CN" else f"Students rate {first.name_en} highly."
            site.on_event(RunEnded(run_id="shot", status="finished", output=json.dumps({"voice_response": words},
                                                                                       ensure_ascii=False)))  # fmt: skip

        plan += [
            (lambda: window.panels_ready and own().catalog is not None, lambda: send(ASK[lang])),
            (lambda: own().ranking is not None and not window.running, name_first),
            (lambda: bool(own().marked_rows()), shoot("ranking")),
            (lambda: True, lambda: own().open_advisor(own().ranking.advisors[0].id)),
            (lambda: own().pages.currentWidget() is own().detail_page, shoot("detail")),
        ]
    elif app_name == "modeling":
        timeline: dict[str, Any] = {}

        def made() -> None:
            build_workspace(run_folder(home, window.turn_id or window.run_id or ""))
            timeline["panel"] = own()
            own().reread()

        plan += [
            (lambda: window.panels_ready, lambda: send(SOLVE[lang])),
            (lambda: any(d.isVisible() for d in window.dialogs.values()), made),
            (lambda: own().timeline is not None and own().waiting, shoot("timeline")),
        ]
    else:
        plan.append((lambda: window.panels_ready, shoot("panel")))

    def run(index: int) -> None:
        if outcome["code"] == 4:
            window.close()
            return
        if index == len(plan):
            outcome["code"] = 0
            window.close()  # stops the run (a pending ask closes as cancelled), then the window closes
            return
        condition, action = plan[index]

        def check() -> None:
            if condition():
                settle = SETTLE_MS if getattr(action, "__name__", "") == "take" else 0
                QTimer.singleShot(settle, lambda: (action(), QTimer.singleShot(50, lambda: run(index + 1))))
            else:
                QTimer.singleShot(50, check)

        check()

    window.bridge.stopped.connect(qt.quit)
    QTimer.singleShot(LIMIT_MS, lambda: qt.exit(5))
    run(0)
    code = qt.exec()
    return outcome["code"] if code == 0 else code


if __name__ == "__main__":
    raise SystemExit(main())
