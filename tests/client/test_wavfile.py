"""WAV files in (any PCM width, channels and rate) and out (24 kHz mono 16-bit)."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from voxcall.client.wavfile import WavError, read_wav, write_wav


def test_round_trip(tmp_path: Path) -> None:
    pcm = (np.sin(np.arange(24000) / 10) * 10000).astype(np.int16)
    write_wav(tmp_path / "a.wav", pcm, 24000)
    with wave.open(str(tmp_path / "a.wav")) as wav:
        assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 24000)
    assert np.array_equal(read_wav(tmp_path / "a.wav", 24000), pcm)


def test_stereo_8_bit_is_averaged_and_resampled(tmp_path: Path) -> None:
    path = tmp_path / "b.wav"
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(2)
        wav.setsampwidth(1)
        wav.setframerate(8000)
        wav.writeframes(bytes([128 + 64, 128 - 64] * 4000 + [128 + 64, 128 + 64] * 4000))  # 0 then +64 << 8
    pcm = read_wav(path, 16000)
    assert len(pcm) == 16000
    assert abs(int(pcm[4000])) < 200 and abs(int(pcm[12000]) - 64 * 256) < 300


def test_not_a_wav_file(tmp_path: Path) -> None:
    (tmp_path / "c.wav").write_bytes(b"not a wav file at all")
    with pytest.raises(WavError, match="cannot read it as a PCM WAV file"):
        read_wav(tmp_path / "c.wav", 24000)
