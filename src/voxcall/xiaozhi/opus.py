"""Opus for xiaozhi devices, with the libopus inside PyAV's FFmpeg (no other library, no system package).

- :class:`Microphone`: a device's packets in (20, 40 or 60 ms: firmware and xiaozhi-sdk send 60, py-xiaozhi on x86
  20; any length Opus allows up to :data:`MAX_PACKET_MS`), PCM out at :data:`DECODED_RATE` (FFmpeg's libopus always
  decodes at 48 kHz; the session resamples what it hears to 16 kHz).
- :class:`Packetizer`: speech in (PCM at the rate announced in the server's ``hello``), Opus packets of exactly
  :data:`~voxcall.xiaozhi.messages.PACKET_MS` out: the firmware decodes each packet into a buffer of that length,
  so a longer one would be lost. What is left at the end of a response is padded with silence to a whole packet.

:func:`packet_ms` reads a packet's length from its table-of-contents byte (RFC 6716, section 3.1).
"""

from __future__ import annotations

import fractions

import av
import numpy as np

from voxcall.audio.codec import PCM
from voxcall.xiaozhi.messages import PACKET_MS

DECODED_RATE = 48_000
"""The rate :class:`Microphone` gives its PCM at."""

MAX_PACKET_MS = 120.0
"""The longest packet Opus allows."""

_FRAME_MS = (10.0, 20.0, 40.0, 60.0) * 3 + (10.0, 20.0) * 2 + (2.5, 5.0, 10.0, 20.0) * 4
"""The frame length of each of the 32 TOC configurations: SILK, hybrid, CELT."""


class OpusError(ValueError):
    """A packet that is no Opus audio voxcall takes."""


def packet_ms(packet: bytes) -> float:
    """How long ``packet`` plays (ms), from its TOC byte and frame count; :class:`OpusError` for one too short to
    say."""
    if not packet:
        raise OpusError("an empty packet")
    frame = _FRAME_MS[packet[0] >> 3]
    code = packet[0] & 0x3
    if code == 0:
        return frame
    if code in (1, 2):
        return 2 * frame
    if len(packet) < 2:
        raise OpusError("a code-3 packet without its frame count")
    return (packet[1] & 0x3F) * frame


class Microphone:
    """Decodes one device's microphone, packet by packet (a decoder's state runs across packets)."""

    def __init__(self) -> None:
        self._decoder = av.CodecContext.create("libopus", "r")
        self._decoder.sample_rate = DECODED_RATE
        self._decoder.layout = "mono"
        self._decoder.format = "s16"

    def decode(self, packet: bytes) -> PCM:
        """The audio of one packet, at :data:`DECODED_RATE`; :class:`OpusError` when it is no Opus packet or
        longer than :data:`MAX_PACKET_MS`."""
        length = packet_ms(packet)
        if not 0 < length <= MAX_PACKET_MS:
            raise OpusError(f"a packet of {length:g} ms; Opus packets last at most {MAX_PACKET_MS:g} ms")
        try:
            frames = self._decoder.decode(av.Packet(packet))
        except (av.error.FFmpegError, ValueError) as exc:
            raise OpusError(f"libopus could not decode the packet ({type(exc).__name__})") from None
        parts = [frame.to_ndarray().reshape(-1) for frame in frames]
        return np.concatenate(parts).astype(np.int16, copy=False) if parts else np.zeros(0, np.int16)


class Packetizer:
    """Encodes one response's speech to a device into packets of :data:`~voxcall.xiaozhi.messages.PACKET_MS`."""

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self.samples = rate * PACKET_MS // 1000
        """Samples per packet."""
        self._encoder = av.CodecContext.create("libopus", "w")
        self._encoder.sample_rate = rate
        self._encoder.layout = "mono"
        self._encoder.format = "s16"
        self._encoder.time_base = fractions.Fraction(1, rate)
        self._encoder.options = {"application": "audio", "frame_duration": str(PACKET_MS)}
        self._held = np.zeros(0, np.int16)  # samples short of a whole packet
        self._pts = 0

    def feed(self, pcm: PCM) -> list[bytes]:
        """The whole packets ``pcm`` completes (at :attr:`rate`); the rest waits for more."""
        held = np.concatenate([self._held, pcm.astype(np.int16, copy=False)])
        whole = len(held) // self.samples * self.samples
        self._held = held[whole:]
        return [packet for start in range(0, whole, self.samples)
                for packet in self._encode(held[start:start + self.samples])]

    def flush(self) -> list[bytes]:
        """The samples still held, padded with silence into one last packet (none when nothing is held)."""
        if not len(self._held):
            return []
        last = np.concatenate([self._held, np.zeros(self.samples - len(self._held), np.int16)])
        self._held = np.zeros(0, np.int16)
        return self._encode(last)

    def _encode(self, pcm: PCM) -> list[bytes]:
        frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate, frame.pts = self.rate, self._pts
        self._pts += len(pcm)
        return [bytes(packet) for packet in self._encoder.encode(frame)]
