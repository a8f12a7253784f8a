"""Symbols read as words, per language: one row per rule, and what must be left as written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.core.hearing.test_heard_audio import EnergyVAD, SilentSTT
from tests.harness import Harness
from voxcall.audio import resample
from voxcall.language import SPOKEN_FORMS
from voxcall.language.rules import Form, Money, SpokenForms
from voxcall.llm.scripted import ScriptedBackend
from voxcall.speech import PiperTTS, WhisperSTT
from voxcall.speech.verbalizer import Verbalizer, verbalizer_for
from voxcall.speech.voice import Voice
from voxcall.speech.voices import VoiceCatalog, verbalizing

ENGLISH_ROWS = [
    # operators between numbers, however spaced
    ("12 * 8 = 96", "12 times 8 equals 96"),
    ("12*8=96", "12 times 8 equals 96"),
    ("12 × 8 = 96", "12 times 8 equals 96"),
    ("12 x 8 = 96", "12 times 8 equals 96"),
    ("100 / 4 = 25", "100 divided by 4 equals 25"),
    ("100 ÷ 4", "100 divided by 4"),
    ("7 - 3 = 4", "7 minus 3 equals 4"),
    ("7 − 3", "7 minus 3"),
    ("340 + 100 + 17 = 457", "340 plus 100 plus 17 equals 457"),
    ("(2 + 3) * 4 = 20", "(2 plus 3) times 4 equals 20"),
    ("12/4=3", "12 divided by 4 equals 3"),  # = makes the / arithmetic
    ("-3 + -2 = -5", "minus 3 plus minus 2 equals minus 5"),
    ("0.5 * 4 = 2.0", "0.5 times 4 equals 2.0"),  # decimals stay digits
    ("$5 + $3 = $8", "5 dollars plus 3 dollars equals 8 dollars"),
    # percent, temperature, units (singular for exactly 1)
    ("30% off", "30 percent off"),
    ("It is -5°C outside", "It is minus 5 degrees Celsius outside"),
    ("1°C", "1 degree Celsius"),
    ("72 °F", "72 degrees Fahrenheit"),
    ("72℉", "72 degrees Fahrenheit"),
    ("a 90° angle", "a 90 degrees angle"),
    ("90 km/h", "90 kilometers per hour"),
    ("1 km", "1 kilometer"),
    ("3.5 mph", "3.5 miles per hour"),
    ("3 kg and 250 g", "3 kilograms and 250 grams"),
    ("5 m, 20cm", "5 meters, 20 centimeters"),
    ("6 ft", "6 feet"),
    ("10 min", "10 minutes"),
    ("16 GB", "16 gigabytes"),
    # money
    ("$5", "5 dollars"),
    ("$1", "1 dollar"),
    ("$3.50", "3 dollars 50 cents"),
    ("$1.01", "1 dollar 1 cent"),
    ("$0.99", "99 cents"),
    ("$2.00", "2 dollars"),
    ("$1,000", "1,000 dollars"),
    ("$2.5bn", "2.5 billion dollars"),
    ("$5 million and $5 more", "5 million dollars and 5 dollars more"),
    ("-$5", "minus 5 dollars"),
    ("€3.50", "3 euros 50 cents"),
    ("5 €", "5 euros"),
    ("£2.40", "2 pounds 40 pence"),
    ("¥500", "500 yen"),
    ("¥1.234", "1.234 yen"),
    # negative numbers, abbreviations
    ("from -3 to 4", "from minus 3 to 4"),
    ("e.g. apples, etc.", "for example apples, et cetera"),
    ("E.g. this, i.e. that", "for example this, that is that"),
    ("Tom & Jerry vs. Rex", "Tom and Jerry versus Rex"),
]

LEFT_AS_WRITTEN = [
    "2026-01-05", "1/2 cup", "1920x1080", "10-20 people", "COVID-19", "Call 555-1234", "It's 10:30", "v1.5",
    "R&D", "x = 5", "5 xylophones", "a 5 minute walk", "3 in a row", "Hello there.", "12 000 euros", "1, 2, 3",
]

CHINESE_ROWS = [
    ("12 × 8 = 96", "12乘以8等于96"),
    ("12*8=96", "12乘以8等于96"),
    ("100 / 4 = 25", "100除以4等于25"),
    ("340 + 100 - 17", "340加100减17"),
    ("5乘以-3", "5乘以负3"),
    ("30%", "百分之30"),
    ("气温-5°C左右", "气温负5摄氏度左右"),
    ("72°F", "华氏72度"),
    ("90 km/h", "每小时90公里"),
    ("3 kg", "3公斤"),
    ("$5", "5美元"),
    ("$3.50", "3.50美元"),
    ("¥500", "500元"),
    ("¥5万", "5万元"),
]


def read(language: str, written: str) -> str:
    """``written`` as a voice speaking ``language`` says it."""
    verbalizer = verbalizer_for(language)
    assert verbalizer is not None
    return verbalizer(written)


@pytest.mark.parametrize(("written", "spoken"), ENGLISH_ROWS)
def test_english(written: str, spoken: str) -> None:
    assert read("en", written) == spoken


@pytest.mark.parametrize("written", LEFT_AS_WRITTEN)
def test_english_leaves_dates_ranges_fractions_and_words_alone(written: str) -> None:
    assert read("en", written) == written


@pytest.mark.parametrize(("written", "spoken"), CHINESE_ROWS)
def test_chinese(written: str, spoken: str) -> None:
    assert read("zh", written) == spoken


@given(st.text(st.sampled_from("1209 .,-−*×x/÷+=()%°C$€£¥km/hgeé&s万"), max_size=40), st.sampled_from(["en", "zh"]))
def test_any_text_is_read_without_failing(written: str, language: str) -> None:
    assert isinstance(read(language, written), str)


def test_a_language_without_a_table_is_spoken_as_written() -> None:
    assert verbalizer_for("de") is None and verbalizer_for(None) is None
    assert set(SPOKEN_FORMS) == {"en", "zh"}


def test_a_new_rule_is_a_row_and_a_language_is_a_table() -> None:
    spanish = Verbalizer(SpokenForms(
        language="es", operators={"*": "por", "=": "es igual a"}, negative="menos {n}",
        units={"%": Form("{n} por ciento"), "km": Form("{n} kilómetro", "{n} kilómetros")},
        currencies={"€": Money(Form("{n} euro", "{n} euros"), Form("{n} céntimo", "{n} céntimos"))},
        words={"p. ej.": "por ejemplo"}))
    assert spanish("12 * 8 = 96, 1 km, -3 km, 30%, €2.50, p. ej.") == (
        "12 por 8 es igual a 96, 1 kilómetro, menos 3 kilómetros, 30 por ciento, 2 euros 50 céntimos, por ejemplo")
    assert spanish("12 + 8") == "12 + 8"  # no row for +: left as written


# -- through a session: the transcript keeps the model's words, the voice is given what is meant ---------------


class Recorder:
    """A stand-in voice that records the text it is given (a little silence per call, at 16 kHz)."""

    sample_rate = 16_000

    def __init__(self) -> None:
        self.texts: list[str] = []

    def synthesize(self, text: str, *, speed: float = 1.0) -> Iterator[npt.NDArray[np.int16]]:
        self.texts.append(text)
        yield np.zeros(160, np.int16)


def voice_speaking(language: str, tmp_path: Path) -> tuple[Voice, Recorder]:
    """A server voice whose default voice speaks ``language`` (a Piper config naming it; the voice is a stand-in)."""
    path = tmp_path / f"{language}-stand-in.onnx"
    path.with_name(path.name + ".json").write_text(json.dumps({"language": {"family": language}}), encoding="utf-8")
    recorder = Recorder()
    stt: Any = SilentSTT()
    return Voice(stt=stt, tts=recorder, vad=EnergyVAD, voices=VoiceCatalog.configured({}, path)), recorder


@pytest.mark.parametrize(("language", "spoken"), [("en", "12 times 8 equals 96"), ("zh", "12乘以8等于96")])
async def test_a_session_transcribes_the_words_and_speaks_what_they_mean(language: str, spoken: str,
                                                                         tmp_path: Path) -> None:
    voice, recorder = voice_speaking(language, tmp_path)
    backend = ScriptedBackend({"rules": [{"match": "times", "reply": "12 * 8 = 96"}]})  # streamed word by word
    async with Harness(backend, voice=voice) as h:
        await h.say("What is 12 times 8?")
        await h.send(type="response.create")
        done = await h.wait("response.output_audio_transcript.done")
        deltas = "".join(e["delta"] for e in h.of("response.output_audio_transcript.delta"))
    assert done["transcript"] == deltas == "12 * 8 = 96"
    assert recorder.texts == [spoken]


def test_the_packaged_voice_is_heard_saying_times(piper: PiperTTS, whisper: WhisperSTT) -> None:
    """The real voice and ear: "12 * 8 = 96" read by the English table is heard with its operator."""
    voice = verbalizing(piper, "en")
    pcm = np.concatenate(list(voice.synthesize("12 * 8 = 96")))
    heard = whisper.transcribe(resample(pcm, piper.sample_rate, whisper.sample_rate)).lower()
    assert "times" in heard and "equal" in heard, heard
