"""Voice activity detection: Silero (shared model, per-stream state) and WebRTC, on real speech and silence."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt
import pytest

from voxcall.speech import VAD, SileroModel, SileroVAD, WebRtcVAD, get_silero

pytestmark = pytest.mark.usefixtures("speech_models")  # the [local] extra


def frames(pcm: npt.NDArray[np.int16], size: int) -> list[npt.NDArray[np.int16]]:
    return [pcm[i:i + size] for i in range(0, len(pcm) - size + 1, size)]


def probabilities(vad: VAD, pcm: npt.NDArray[np.int16]) -> list[float]:
    return [vad.probability(frame) for frame in frames(pcm, vad.frame_samples)]


def padded(speech: npt.NDArray[np.int16]) -> npt.NDArray[np.int16]:
    silence = np.zeros(8000, dtype=np.int16)
    return np.concatenate([silence, speech, silence])


def test_silero_frames_are_32_ms_at_16_khz(silero: SileroModel) -> None:
    vad = SileroVAD(silero)
    assert (vad.sample_rate, vad.frame_samples) == (16000, 512)


def test_silero_tells_speech_from_silence(silero: SileroModel, question_16k: npt.NDArray[np.int16]) -> None:
    vad = SileroVAD(silero)
    assert max(probabilities(vad, np.zeros(16000, dtype=np.int16))) < 0.1
    speech = probabilities(vad, question_16k)
    assert np.mean(np.array(speech) > 0.5) > 0.6


def test_silero_streams_sharing_one_model_do_not_interfere(silero: SileroModel,
                                                          question_16k: npt.NDArray[np.int16]) -> None:
    rng = np.random.default_rng(1)
    a = padded(question_16k)
    b = rng.normal(0, 3000, len(a)).astype(np.int16)  # loud noise: a very different state
    alone_a = probabilities(SileroVAD(silero), a)
    alone_b = probabilities(SileroVAD(silero), b)
    vad_a, vad_b = SileroVAD(silero), SileroVAD(silero)
    interleaved_a, interleaved_b = [], []
    for frame_a, frame_b in zip(frames(a, 512), frames(b, 512), strict=True):
        interleaved_a.append(vad_a.probability(frame_a))
        interleaved_b.append(vad_b.probability(frame_b))
    assert interleaved_a == alone_a
    assert interleaved_b == alone_b


def test_one_silero_model_serves_streams_on_many_threads(silero: SileroModel,
                                                         question_16k: npt.NDArray[np.int16]) -> None:
    expected = probabilities(SileroVAD(silero), question_16k)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: probabilities(SileroVAD(silero), question_16k), range(4)))
    assert all(result == expected for result in results)


def test_silero_reset_starts_the_stream_afresh(silero: SileroModel, question_16k: npt.NDArray[np.int16]) -> None:
    vad = SileroVAD(silero)
    first = probabilities(vad, question_16k)
    vad.reset()
    assert probabilities(vad, question_16k) == first


def test_silero_defaults_to_the_shared_model(silero: SileroModel) -> None:
    assert SileroVAD().model is silero is get_silero()


def test_webrtc_says_yes_or_no(question_16k: npt.NDArray[np.int16]) -> None:
    vad = WebRtcVAD()
    assert (vad.sample_rate, vad.frame_samples) == (16000, 480)
    assert set(probabilities(vad, np.zeros(16000, dtype=np.int16))) == {0.0}
    speech = probabilities(vad, question_16k)
    assert set(speech) == {0.0, 1.0}
    assert speech.count(1.0) > 0.6 * len(speech)


def test_webrtc_rejects_an_unknown_aggressiveness() -> None:
    with pytest.raises(ValueError, match="aggressiveness"):
        WebRtcVAD(4)


@pytest.mark.parametrize("make", [SileroVAD, WebRtcVAD])
def test_a_frame_of_the_wrong_size_is_an_error(make: type[SileroVAD] | type[WebRtcVAD]) -> None:
    vad = make()
    with pytest.raises(ValueError, match=f"must be {vad.frame_samples} mono samples"):
        vad.probability(np.zeros(vad.frame_samples + 1, dtype=np.int16))
