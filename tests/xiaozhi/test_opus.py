"""Opus for devices: every packet sent lasts exactly 60 ms (by its TOC and by decoding it with the libopus the
devices' clients use), a device's 20, 40 and 60 ms packets decode, and what cannot be a packet is refused."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from tests.requirements import require_module
from voxcall.xiaozhi.opus import DECODED_RATE, Microphone, OpusError, Packetizer, packet_ms

require_module("xiaozhi_sdk")  # it brings opuslib and, on import, the libopus opuslib loads: the clients' codec
opuslib = require_module("opuslib")


def tone(rate: int, seconds: float, hz: float = 440.0) -> npt.NDArray[np.int16]:
    t = np.arange(round(rate * seconds)) / rate
    return (np.sin(2 * np.pi * hz * t) * 8000).astype(np.int16)


@pytest.mark.parametrize("rate", [24_000, 16_000])
def test_every_packet_sent_lasts_exactly_60_ms(rate: int) -> None:
    packetizer = Packetizer(rate)
    speech = tone(rate, 1.03)
    step = rate // 10  # the session's 100 ms chunks
    packets = [p for start in range(0, len(speech), step) for p in packetizer.feed(speech[start:start + step])]
    packets += packetizer.flush()
    assert len(packets) == 18, "1.03 s is 17 whole packets and a padded last one"
    assert {packet_ms(p) for p in packets} == {60.0}
    decoder = opuslib.Decoder(rate, 1)
    assert {len(decoder.decode(p, rate * 60 // 1000)) // 2 for p in packets} == {rate * 60 // 1000}
    assert packetizer.flush() == [], "nothing is held after a flush"


def test_the_packets_carry_the_speech() -> None:
    """Decoded by the clients' libopus, the packets give back the tone (after the codec's short delay)."""
    packetizer = Packetizer(24_000)
    speech = tone(24_000, 0.6, hz=500)
    packets = packetizer.feed(speech) + packetizer.flush()
    decoder = opuslib.Decoder(24_000, 1)
    pcm = np.concatenate([np.frombuffer(decoder.decode(p, 1440), np.int16) for p in packets])
    spectrum = np.abs(np.fft.rfft(pcm[2400:12000].astype(np.float64)))
    assert abs(np.argmax(spectrum) * 24_000 / 9600 - 500) < 10


@pytest.mark.parametrize("frame_ms", [20, 40, 60])
def test_a_devices_packets_of_20_40_and_60_ms_decode(frame_ms: int) -> None:
    encoder = opuslib.Encoder(16_000, 1, opuslib.APPLICATION_VOIP)
    microphone = Microphone()
    samples = 16 * frame_ms
    speech = tone(16_000, 1.0)
    decoded = [microphone.decode(encoder.encode(speech[i:i + samples].tobytes(), samples))
               for i in range(0, len(speech) - samples + 1, samples)]
    assert {len(pcm) for pcm in decoded} == {DECODED_RATE * frame_ms // 1000}
    assert np.abs(np.concatenate(decoded)).max() > 4000, "the tone came through"


def test_what_is_no_opus_packet_is_refused() -> None:
    microphone = Microphone()
    with pytest.raises(OpusError):
        microphone.decode(b"")
    with pytest.raises(OpusError, match="120 ms"):
        microphone.decode(bytes([0x03 | (3 << 3), 0x3F]) + b"\0" * 10)  # 63 frames of 60 ms
    assert packet_ms(bytes([16 << 3])) == 2.5  # CELT 2.5 ms, one frame
    assert packet_ms(bytes([(3 << 3) | 1])) == 120.0  # SILK 60 ms, two frames
