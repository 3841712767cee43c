"""Speech synthesised offline by the bundled espeak-ng: a Chinese reply is non-silent Mandarin (one tone-marked
syllable per character, no tone digits read aloud: its length fits its characters; RMS and length measured in Python
and, where sox is installed, by `sox stat`), English is English, bad text is refused, results are cached."""

from __future__ import annotations

import array
import io
import math
import re
import shutil
import subprocess
import wave
from pathlib import Path

import pytest

from consulta.apps.advisor._voice import MAX_SPEECH_CHARS, SpeechFailed, phonemes, synthesize

REPLY = "好的，北京大学计算机系。正在为你筛选导师。"
HAN = re.compile(r"[\u4e00-\u9fff]")


def measured(wav: bytes) -> tuple[float, float]:
    """(seconds, RMS on a 0-1 scale) of a 16-bit mono WAV."""
    with wave.open(io.BytesIO(wav)) as audio:
        assert (audio.getnchannels(), audio.getsampwidth()) == (1, 2)
        samples = array.array("h", audio.readframes(audio.getnframes()))
        seconds = audio.getnframes() / audio.getframerate()
    return seconds, math.sqrt(sum(s * s for s in samples) / len(samples)) / 32768


def test_a_chinese_reply_is_non_silent_mandarin(tmp_path: Path) -> None:
    speech = synthesize(REPLY, lang="zh-CN")
    assert speech.voice == "cmn" and speech.wav[:4] == b"RIFF"
    seconds, rms = measured(speech.wav)
    characters = len(HAN.findall(REPLY))
    assert rms > 0.03, f"silent: RMS {rms:.4f}"
    # Mandarin at a speaking pace: a tone digit read aloud ("er", "wu") or letters spelled out would be far longer.
    assert 0.2 * characters < seconds < 0.7 * characters, f"{seconds:.2f} s for {characters} characters"
    # About one tone mark per character (a few are written as tone letters): the Mandarin voice, not the English one
    # spelling out "Chinese letter".
    said = phonemes(REPLY, lang="zh-CN")
    assert characters - 2 <= len(re.findall(r"[1-5]", said)) <= characters, said
    english = phonemes(REPLY, lang="en")  # what a voice without Mandarin says: "Chinese letter" per character
    assert "tʃˈaɪniːz" in english and "tʃˈaɪniːz" not in said and len(said.split()) >= characters - 3, said
    if shutil.which("sox"):
        path = tmp_path / "reply.wav"
        path.write_bytes(speech.wav)
        stat = subprocess.run(
            ["sox", str(path), "-n", "stat"], capture_output=True, text=True, timeout=30, check=True
        ).stderr
        values = dict(re.findall(r"^(Length \(seconds\)|RMS\s+amplitude):\s+([\d.]+)", stat, re.M))
        assert float(values["RMS     amplitude"]) > 0.03 and abs(float(values["Length (seconds)"]) - seconds) < 0.01, (
            stat
        )


def test_english_is_spoken_with_the_english_voice() -> None:
    speech = synthesize("Okay, Peking University computer science.", lang="en")
    seconds, rms = measured(speech.wav)
    assert speech.voice == "en" and 1.0 < seconds < 6.0 and rms > 0.03
    assert not re.search(r"[1-5]", phonemes("Peking University", lang="en"))


def test_bad_text_is_refused_and_results_are_cached() -> None:
    for text, code in (
        ("", "speech_text_empty"),
        ("  \n ", "speech_text_empty"),
        ("长" * (MAX_SPEECH_CHARS + 1), "speech_text_too_long"),
    ):
        with pytest.raises(SpeechFailed) as refused:
            synthesize(text, lang="zh-CN")
        assert refused.value.error_code == code and refused.value.field == "text"
    assert synthesize(REPLY, lang="zh") is synthesize(REPLY, lang="zh-CN")  # the same language, the same cached audio
