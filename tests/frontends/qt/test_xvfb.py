"""The window on a real X server (Xvfb): the main window with the question dialog open, saved as a screenshot to
test-artifacts/qt/ (look at it: it is the desktop's picture in the docs)."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtGui import QImage  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.desktop]

ROOT = Path(__file__).resolve().parents[3]
ARTIFACTS = ROOT / "test-artifacts" / "qt"
APP = Path(__file__).with_name("_screenshot_app.py")
XVFB = shutil.which("Xvfb") or "/usr/bin/Xvfb"
START_LIMIT_S = 20
RUN_LIMIT_S = 120


@pytest.fixture
def display() -> Iterator[str]:
    """A fresh Xvfb on a free display number (Xvfb picks it and reports it on a pipe once it accepts clients)."""
    if not Path(XVFB).exists():
        pytest.skip("Xvfb is not installed (apt-get install xvfb)")
    read_end, write_end = os.pipe()
    xvfb = subprocess.Popen(
        [XVFB, "-displayfd", str(write_end), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], START_LIMIT_S)
        number = os.read(read_end, 16).decode().strip() if ready else ""
        assert number.isdigit(), "Xvfb did not report a display"
        yield f":{number}"
    finally:
        os.close(read_end)
        xvfb.terminate()
        try:
            xvfb.wait(timeout=10)
        except subprocess.TimeoutExpired:
            xvfb.kill()
            xvfb.wait(timeout=10)


def not_blank(path: Path) -> bool:
    """A real window has many colours; a blank or black screen has one or two."""
    image = QImage(str(path))
    assert (image.width(), image.height()) == (1280, 800)
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    return len(colours) > 20


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_main_window_with_the_question_dialog_under_xvfb(display: str, lang: str, tmp_path: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    question, plan = ARTIFACTS / f"question-dialog-{lang}.png", ARTIFACTS / f"plan-staged-{lang}.png"
    for out in (question, plan):
        out.unlink(missing_ok=True)
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "PYDANTIC_AI_NO_BANNER": "1"}
    done = subprocess.run(
        [sys.executable, str(APP), str(tmp_path), lang, str(question), str(plan)],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert question.exists() and plan.exists()
    assert not_blank(question) and not_blank(plan)
    assert question.read_bytes() != plan.read_bytes()


PANELS = Path(__file__).with_name("_screenshot_panels.py")
SHOTS = {
    "quiz": ("feedback", "results"),
    "advisor": ("ranking", "detail"),
    "modeling": ("timeline",),
    "tutor": ("panel",),
}


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
@pytest.mark.parametrize("app", list(SHOTS))
def test_each_app_s_own_panels_under_xvfb(display: str, app: str, lang: str, tmp_path: Path) -> None:
    """quiz's test (an item's feedback, the results with the plot and the review), advisor's ranking with the named
    advisor marked and the detail, modeling's timeline with the escalation's dialog, tutor's uploads: each saved as
    test-artifacts/qt/<app>-<shot>-<lang>.png."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shots = [ARTIFACTS / f"{app}-{shot}-{lang}.png" for shot in SHOTS[app]]
    for out in shots:
        out.unlink(missing_ok=True)
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "PYDANTIC_AI_NO_BANNER": "1"}
    prefix = str(ARTIFACTS / f".{app}-{lang}")  # one per run: no other run can take its shot away
    done = subprocess.run(
        [sys.executable, str(PANELS), app, str(tmp_path), lang, prefix],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for shot in SHOTS[app]:
        taken = Path(f"{prefix}-{shot}.png")
        assert taken.exists(), f"no {taken.name} after exit 0: {done.stdout[-1500:]} {done.stderr[-1500:]}"
        taken.replace(ARTIFACTS / f"{app}-{shot}-{lang}.png")
    for out in shots:
        assert out.exists() and not_blank(out)
