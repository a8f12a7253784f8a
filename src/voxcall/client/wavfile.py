"""WAV files in and out of the talk client, with the standard library's :mod:`wave` (PCM only, no extra package)."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import numpy.typing as npt

from voxcall.audio.codec import resample

_DTYPES: dict[int, str] = {1: "u1", 2: "<i2", 4: "<i4"}  # WAV PCM: 8-bit unsigned, wider signed


class WavError(ValueError):
    """A WAV file that cannot be read; the message names the file and the problem."""


def read_wav(path: Path, rate: int) -> npt.NDArray[np.int16]:
    """The audio of the PCM WAV file ``path`` as mono int16 at ``rate`` Hz (channels averaged, resampled)."""
    try:
        with wave.open(str(path), "rb") as wav:
            width, channels, source_rate = wav.getsampwidth(), wav.getnchannels(), wav.getframerate()
            frames = wav.readframes(wav.getnframes())
    except (OSError, EOFError, wave.Error) as exc:
        raise WavError(f"{path}: cannot read it as a PCM WAV file ({exc})") from None
    if width not in _DTYPES:
        raise WavError(f"{path}: {8 * width}-bit samples are not supported; use 8, 16 or 32-bit PCM")
    samples = np.frombuffer(frames, dtype=_DTYPES[width]).astype(np.float32)
    if width == 1:
        samples = (samples - 128.0) * 256.0  # unsigned 8-bit
    elif width == 4:
        samples /= 65536.0
    mono = samples.reshape(-1, channels).mean(axis=1)
    pcm = np.clip(np.rint(mono), -32768, 32767).astype(np.int16)
    return resample(pcm, source_rate, rate)


def write_wav(path: Path, pcm: npt.NDArray[np.int16], rate: int) -> None:
    """Write mono int16 ``pcm`` at ``rate`` Hz to ``path`` as a 16-bit PCM WAV file."""
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(pcm.astype("<i2", copy=False).tobytes())
