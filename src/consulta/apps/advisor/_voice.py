"""Speech synthesised on the server, offline: espeak-ng 1.52 as bundled by the `espeakng-loader` package (its
libespeak-ng and data, loaded with ctypes; Debian's 1.51 reads Mandarin tone digits aloud), Mandarin voice `cmn` for
zh, `en` for English, to 16-bit mono WAV. The library is one synthesiser per process, so calls take turns (a lock);
results are cached (LRU, by language and text).
"""

from __future__ import annotations

import array
import ctypes
import io
import threading
import wave
from collections import OrderedDict
from dataclasses import dataclass

from ...i18n import normalize_lang
from ...runtime import ToolError

__all__ = ["MAX_SPEECH_CHARS", "VOICES", "Speech", "SpeechFailed", "phonemes", "synthesize"]

MAX_SPEECH_CHARS = 200
"""The longest text spoken (a voice_response is at most 50 characters; the rest is room for English)."""
VOICES = {"zh-CN": "cmn", "en": "en"}
_CACHE_SIZE = 128
_RATE_WPM = 175

_AUDIO_OUTPUT_SYNCHRONOUS = 2
_ESPEAK_CHARS_UTF8 = 1
_ESPEAK_RATE = 1
_PHONEME_IPA = 0x02
_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)


class SpeechFailed(ToolError):
    """Text that cannot be spoken (`speech_text_empty`, `speech_text_too_long`) or a synthesiser that cannot run
    (`speech_unavailable`)."""


@dataclass(frozen=True)
class Speech:
    wav: bytes
    sample_rate: int
    samples: int
    voice: str

    @property
    def seconds(self) -> float:
        return self.samples / self.sample_rate


class _Espeak:
    """The bundled libespeak-ng, initialised once, in synchronous mode: synthesis hands samples to a callback."""

    def __init__(self) -> None:
        import espeakng_loader

        self.lib = ctypes.CDLL(espeakng_loader.get_library_path())
        self.lib.espeak_Initialize.restype = ctypes.c_int
        self.lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        self.lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        self.lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        self.lib.espeak_Synth.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]  # fmt: skip
        self.lib.espeak_TextToPhonemes.restype = ctypes.c_char_p
        self.lib.espeak_TextToPhonemes.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, ctypes.c_int]
        self.rate = self.lib.espeak_Initialize(
            _AUDIO_OUTPUT_SYNCHRONOUS, 0, espeakng_loader.get_data_path().encode(), 0
        )
        if self.rate <= 0:
            raise OSError(f"espeak-ng did not start (code {self.rate})")
        self.samples = array.array("h")
        self._callback = _CALLBACK(self._heard)  # kept: the library holds a pointer to it
        self.lib.espeak_SetSynthCallback(self._callback)

    def _heard(self, wav: ctypes.Array[ctypes.c_short], count: int, events: int) -> int:
        if count > 0:
            self.samples.extend(wav[:count])
        return 0  # go on

    def voice(self, name: str) -> None:
        code = self.lib.espeak_SetVoiceByName(name.encode())
        if code != 0:
            raise OSError(f"espeak-ng has no voice {name!r} (code {code})")

    def speak(self, text: str, voice: str) -> array.array[int]:
        self.voice(voice)
        self.lib.espeak_SetParameter(_ESPEAK_RATE, _RATE_WPM, 0)
        self.samples = array.array("h")
        data = text.encode("utf-8")
        code = self.lib.espeak_Synth(data, len(data) + 1, 0, 0, 0, _ESPEAK_CHARS_UTF8, None, None)
        if code != 0:
            raise OSError(f"espeak-ng could not synthesise (code {code})")
        self.lib.espeak_Synchronize()
        return self.samples

    def phonemes(self, text: str, voice: str) -> str:
        self.voice(voice)
        pointer = ctypes.c_char_p(text.encode("utf-8"))
        parts = []
        while pointer.value:  # one clause per call
            out = self.lib.espeak_TextToPhonemes(ctypes.byref(pointer), _ESPEAK_CHARS_UTF8, _PHONEME_IPA)
            parts.append((out or b"").decode("utf-8", "replace"))
        return " ".join(p for p in parts if p)


_lock = threading.Lock()
_engine: _Espeak | None = None
_cache: OrderedDict[tuple[str, str], Speech] = OrderedDict()


def _espeak() -> _Espeak:
    global _engine
    if _engine is None:
        try:
            _engine = _Espeak()
        except (OSError, ImportError, RuntimeError) as error:
            raise SpeechFailed(
                "speech_unavailable",
                f"The speech synthesiser cannot start: {error}.",
                hint="Install the espeakng-loader package.",
            ) from None
    return _engine


def _checked(text: str) -> str:
    spoken = " ".join(text.split())
    if not spoken:
        raise SpeechFailed("speech_text_empty", "There is no text to speak.", field="text")
    if len(spoken) > MAX_SPEECH_CHARS:
        raise SpeechFailed(
            "speech_text_too_long",
            f"The text is {len(spoken)} characters; at most {MAX_SPEECH_CHARS} are spoken.",
            field="text",
        )
    return spoken


def synthesize(text: str, *, lang: str) -> Speech:
    """`text` spoken in `lang` (`zh-CN` → Mandarin, else English) as WAV. SpeechFailed for empty or too long text
    (over MAX_SPEECH_CHARS) or when the synthesiser cannot run. Thread-safe; cached."""
    spoken = _checked(text)
    voice = VOICES[normalize_lang(lang)]
    key = (voice, spoken)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
        engine = _espeak()
        try:
            samples = engine.speak(spoken, voice)
        except OSError as error:
            raise SpeechFailed("speech_unavailable", f"The text could not be spoken: {error}.") from None
        buffer = io.BytesIO()
        with wave.open(buffer, "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(engine.rate)
            out.writeframes(samples.tobytes())
        speech = Speech(wav=buffer.getvalue(), sample_rate=engine.rate, samples=len(samples), voice=voice)
        _cache[key] = speech
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
        return speech


def phonemes(text: str, *, lang: str) -> str:
    """What the synthesiser says for `text` in `lang`, in IPA (Mandarin with its tone marks): a check of the voice."""
    spoken = _checked(text)
    with _lock:
        return _espeak().phonemes(spoken, VOICES[normalize_lang(lang)])
