"""Audio files → mono int16 PCM at a chosen rate, with PyAV (FFmpeg): MP3, WAV, FLAC, Ogg (Vorbis, Opus), AAC, M4A.

The container format is chosen from the file's suffix rather than probed from its content, so a file can never
make FFmpeg open anything else (a playlist or ``concat`` demuxer reaching other files or URLs): each file is read
by the one demuxer its suffix names. PyAV's resampler (libswresample) converts the decoded audio to mono int16
at the wanted rate, downmixing every channel.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType

import av
import numpy as np
import numpy.typing as npt

__all__ = ["AUDIO_SUFFIXES", "AudioFileError", "AudioFileReader", "decode_file", "iter_decode"]

PCM = npt.NDArray[np.int16]

_DEMUXERS = MappingProxyType({
    ".mp3": "mp3",
    ".wav": "wav",
    ".flac": "flac",
    ".ogg": "ogg",
    ".oga": "ogg",
    ".opus": "ogg",
    ".aac": "aac",  # ADTS
    ".m4a": "mp4",
})
AUDIO_SUFFIXES: frozenset[str] = frozenset(_DEMUXERS)
"""The file suffixes (lower case, with the dot) voxcall decodes."""


class AudioFileError(ValueError):
    """An audio file could not be read: missing, unreadable, not audio, or of an unsupported type."""


def _error(path: Path, what: str, exc: Exception) -> AudioFileError:
    """An :class:`AudioFileError` naming the file (not its folder) and FFmpeg's reason, without its errno noise."""
    reason = getattr(exc, "strerror", None) or str(exc)
    return AudioFileError(f"{what} {path.name}: {reason}")


class AudioFileReader:
    """An open audio file, read as consecutive mono int16 chunks of ``chunk_ms`` at ``rate`` Hz.

    Opening raises :class:`AudioFileError` at once for a file that cannot be played, so a caller can report it
    before starting playback. :meth:`read` and :meth:`close` may be called from different threads (a player reads
    in a worker thread and closes from the event loop): ``close`` waits for a read in progress to finish.
    """

    def __init__(self, path: str | os.PathLike[str], rate: int = 24000, chunk_ms: int = 100) -> None:
        if rate <= 0 or chunk_ms <= 0:
            raise ValueError(f"rate and chunk_ms must be positive, got {rate} and {chunk_ms}")
        self.path = Path(path)
        self.rate = rate
        self._chunk = max(1, rate * chunk_ms // 1000)
        demuxer = _DEMUXERS.get(self.path.suffix.lower())
        if demuxer is None:
            raise AudioFileError(f"unsupported audio file type {self.path.suffix or '(none)'!r} for "
                                 f"{self.path.name}; supported: {', '.join(sorted(AUDIO_SUFFIXES))}")
        try:
            self._container: av.container.InputContainer | None = av.open(str(self.path), "r", format=demuxer)
        except (av.FFmpegError, OSError) as exc:
            raise _error(self.path, "cannot open", exc) from None
        if not self._container.streams.audio:
            self._container.close()
            raise AudioFileError(f"{self.path.name} holds no audio")
        self._frames = self._container.decode(self._container.streams.audio[0])
        self._resampler = av.AudioResampler(format="s16", layout="mono", rate=rate)
        self._pending: list[PCM] = []
        self._pending_samples = 0
        self._samples_read = 0
        self._decoded_all = False
        self._lock = threading.Lock()

    def read(self) -> PCM | None:
        """The next chunk (the last one may be shorter), or ``None`` at the end or once closed.

        Raises :class:`AudioFileError` when the file turns out to be corrupt, or holds no audio after all.
        """
        with self._lock:
            if self._container is None:
                return None
            while self._pending_samples < self._chunk and not self._decoded_all:
                self._decode_more()
            if self._pending_samples:
                return self._take(min(self._chunk, self._pending_samples))
            if not self._samples_read:  # e.g. MP3 bytes in a .flac file: the demuxer finds no frames
                raise AudioFileError(f"no audio could be decoded from {self.path.name}")
            return None

    def close(self) -> None:
        """Release the file; reading returns ``None`` afterwards. Idempotent."""
        with self._lock:
            if self._container is not None:
                self._container.close()
                self._container = None
            self._pending.clear()
            self._pending_samples = 0

    def __enter__(self) -> AudioFileReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _decode_more(self) -> None:
        """Decode one more frame into the pending samples (at the end, flush the resampler instead)."""
        try:
            frame = next(self._frames, None)
            converted = self._resampler.resample(frame)  # None flushes what the resampler still holds
        except av.FFmpegError as exc:
            raise _error(self.path, "cannot decode", exc) from None
        self._decoded_all = frame is None
        for out in converted:
            samples = out.to_ndarray().reshape(-1).astype(np.int16, copy=False)
            self._pending.append(samples)
            self._pending_samples += len(samples)

    def _take(self, count: int) -> PCM:
        """Remove and return the first ``count`` pending samples."""
        pending = np.concatenate(self._pending) if len(self._pending) > 1 else self._pending[0]
        chunk, rest = pending[:count], pending[count:]
        self._pending = [rest] if len(rest) else []
        self._pending_samples = len(rest)
        self._samples_read += count
        return chunk


def iter_decode(path: str | os.PathLike[str], rate: int = 24000, chunk_ms: int = 100) -> Iterator[PCM]:
    """Decode ``path`` lazily as mono int16 chunks of ``chunk_ms`` at ``rate`` Hz (see :class:`AudioFileReader`).

    The file is opened on the first ``next()`` and closed when the iterator ends or is closed.
    """
    with AudioFileReader(path, rate, chunk_ms) as reader:
        while (chunk := reader.read()) is not None:
            yield chunk


def decode_file(path: str | os.PathLike[str], rate: int = 24000) -> PCM:
    """Decode the whole of ``path`` to one mono int16 array at ``rate`` Hz; raises :class:`AudioFileError`."""
    chunks = list(iter_decode(path, rate, chunk_ms=1000))
    return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)
