"""Base64 wire audio in every format, strict decoding errors, resampling, gain and durations."""

from __future__ import annotations

import base64

import numpy as np
import numpy.typing as npt
import pytest

from voxcall.audio import (
    PCM24K,
    PCMA,
    PCMU,
    AudioDecodeError,
    AudioFormat,
    StreamResampler,
    alaw_decode,
    alaw_encode,
    apply_gain,
    decode_audio,
    encode_audio,
    pcm_duration_ms,
    resample,
    ulaw_decode,
    ulaw_encode,
)


def sine(freq: float, rate: int, seconds: float = 1.0, amplitude: int = 10000) -> npt.NDArray[np.int16]:
    t = np.arange(int(rate * seconds)) / rate
    return (np.sin(2 * np.pi * freq * t) * amplitude).astype(np.int16)


def peak_hz(pcm: npt.NDArray[np.int16], rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(pcm.astype(np.float64)))
    return float(np.fft.rfftfreq(len(pcm), 1 / rate)[int(np.argmax(spectrum))])


def test_pcm16_is_little_endian_and_round_trips_exactly() -> None:
    pcm = np.array([1, -2, 32767, -32768], dtype=np.int16)
    b64 = encode_audio(pcm, PCM24K)
    assert base64.b64decode(b64) == b"\x01\x00\xfe\xff\xff\x7f\x00\x80"
    decoded = decode_audio(b64, PCM24K)
    assert decoded.dtype == np.int16
    assert np.array_equal(decoded, pcm)


def test_g711_formats_round_trip_through_their_codecs() -> None:
    pcm = sine(440, 8000, 0.1)
    ulaw = decode_audio(encode_audio(pcm, PCMU), PCMU)
    alaw = decode_audio(encode_audio(pcm, PCMA), PCMA)
    assert np.array_equal(ulaw, ulaw_decode(ulaw_encode(pcm)))
    assert np.array_equal(alaw, alaw_decode(alaw_encode(pcm)))
    assert len(base64.b64decode(encode_audio(pcm, PCMU))) == len(pcm)  # one byte per sample


def test_three_g711_bytes_are_three_samples() -> None:
    assert len(decode_audio(base64.b64encode(b"\xff\x80\x00").decode(), PCMU)) == 3


@pytest.mark.parametrize("fmt", [PCM24K, PCMU, PCMA])
def test_empty_audio_decodes_to_no_samples(fmt: AudioFormat) -> None:
    decoded = decode_audio("", fmt)
    assert decoded.dtype == np.int16
    assert len(decoded) == 0


@pytest.mark.parametrize("bad", ["not base64!", "AAA", "AA==AA==", "AAAA\n"])
def test_invalid_base64_is_an_error(bad: str) -> None:
    with pytest.raises(AudioDecodeError, match="not valid base64"):
        decode_audio(bad, PCM24K)


def test_odd_byte_count_for_pcm16_is_an_error() -> None:
    with pytest.raises(AudioDecodeError, match="whole number of 2-byte samples, got 3 bytes"):
        decode_audio(base64.b64encode(b"\x00\x01\x02").decode(), PCM24K)


def test_decode_errors_are_value_errors() -> None:
    assert issubclass(AudioDecodeError, ValueError)


def test_encode_refuses_float_samples() -> None:
    with pytest.raises(TypeError, match="int16"):
        encode_audio(np.zeros(4, dtype=np.float32), PCM24K)


@pytest.mark.parametrize(("src", "dst"), [(24000, 16000), (16000, 24000), (22050, 16000), (24000, 8000)])
def test_resample_keeps_duration_and_pitch(src: int, dst: int) -> None:
    out = resample(sine(440, src), src, dst)
    assert out.dtype == np.int16
    assert len(out) == dst
    assert abs(peak_hz(out, dst) - 440) <= 1


def test_resample_to_the_same_rate_is_identity() -> None:
    pcm = sine(440, 16000, 0.01)
    assert resample(pcm, 16000, 16000) is pcm


def test_stream_resampler_matches_whole_clip_resampling() -> None:
    pcm = sine(440, 24000)
    resampler = StreamResampler(24000, 16000)
    chunks = [resampler.process(pcm[i:i + 480]) for i in range(0, len(pcm), 480)]  # 20 ms chunks
    streamed = np.concatenate([*chunks, resampler.flush()])
    assert len(streamed) == 16000
    assert np.abs(streamed.astype(np.int32) - resample(pcm, 24000, 16000)).max() <= 4


def test_stream_resampler_at_equal_rates_passes_through() -> None:
    resampler = StreamResampler(24000, 24000)
    pcm = sine(440, 24000, 0.01)
    assert resampler.process(pcm) is pcm
    assert len(resampler.flush()) == 0


def test_gain_scales_rounds_and_clips() -> None:
    pcm = np.array([20000, -20000, 100, -3, 0], dtype=np.int16)
    assert apply_gain(pcm, 2.0).tolist() == [32767, -32768, 200, -6, 0]
    assert apply_gain(pcm, 0.5).tolist() == [10000, -10000, 50, -2, 0]  # -1.5 rounds to even
    assert apply_gain(pcm, 0.0).tolist() == [0, 0, 0, 0, 0]
    assert apply_gain(pcm, 1.0).dtype == np.int16


def test_duration_in_whole_milliseconds() -> None:
    assert pcm_duration_ms(24000, 24000) == 1000
    assert pcm_duration_ms(320, 16000) == 20
    assert pcm_duration_ms(160, 8000) == 20
    assert pcm_duration_ms(23, 24000) == 0
