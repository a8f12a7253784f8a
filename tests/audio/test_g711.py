"""G.711: the ITU reference values, round-trip error bounds, and bit-exactness against CPython's old audioop."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pytest

from voxcall.audio import alaw_decode, alaw_encode, ulaw_decode, ulaw_encode

ALL_SAMPLES = np.arange(-32768, 32768, dtype=np.int16)
ALL_CODES = np.arange(256, dtype=np.uint8)

Encoder = Callable[[npt.NDArray[np.int16]], npt.NDArray[np.uint8]]
Decoder = Callable[[npt.NDArray[np.uint8]], npt.NDArray[np.int16]]


def test_ulaw_reference_values() -> None:
    assert ulaw_encode(np.array([0, 32767, -32768, 1000, -1000], np.int16)).tolist() == [0xFF, 0x80, 0x00, 0xCE, 0x4E]
    assert ulaw_decode(np.array([0xFF, 0x7F, 0x80, 0x00, 0xCE], np.uint8)).tolist() == [0, 0, 32124, -32124, 988]


def test_alaw_reference_values() -> None:
    assert alaw_encode(np.array([0, 32767, -32768, -1], np.int16)).tolist() == [0xD5, 0xAA, 0x2A, 0x55]
    assert alaw_decode(np.array([0xD5, 0x55, 0xAA, 0x2A], np.uint8)).tolist() == [8, -8, 32256, -32256]


def test_every_code_survives_decode_then_encode() -> None:
    assert np.array_equal(alaw_encode(alaw_decode(ALL_CODES)), ALL_CODES)
    ulaw = ulaw_encode(ulaw_decode(ALL_CODES))
    negative_zero = ALL_CODES == 0x7F  # decodes to 0, which encodes as positive zero 0xFF
    assert np.array_equal(ulaw[~negative_zero], ALL_CODES[~negative_zero])
    assert ulaw[negative_zero].tolist() == [0xFF]


@pytest.mark.parametrize(("encode", "decode", "small_error"), [(ulaw_encode, ulaw_decode, 7),
                                                               (alaw_encode, alaw_decode, 8)])
def test_round_trip_error_is_within_the_quantisation_step(encode: Encoder, decode: Decoder, small_error: int) -> None:
    decoded = decode(encode(ALL_SAMPLES)).astype(np.int32)
    error = np.abs(decoded - ALL_SAMPLES.astype(np.int32))
    magnitude = np.abs(ALL_SAMPLES.astype(np.int32))
    assert error[magnitude < 32].max() <= small_error  # below the smallest step (8), near zero
    loud = magnitude >= 1024
    assert (error[loud] / magnitude[loud]).max() < 0.04  # under 4 % of the signal: logarithmic companding
    assert error[magnitude <= 32000].max() <= 516  # about half the widest step (1024)


@pytest.mark.parametrize(("encode", "decode"), [(ulaw_encode, ulaw_decode), (alaw_encode, alaw_decode)])
def test_a_sine_keeps_telephone_quality(encode: Encoder, decode: Decoder) -> None:
    t = np.arange(8000) / 8000
    sine = (np.sin(2 * np.pi * 440 * t) * 16000).astype(np.int16)
    noise = decode(encode(sine)).astype(np.float64) - sine
    snr_db = 10 * np.log10(np.mean(sine.astype(np.float64) ** 2) / np.mean(noise**2))
    assert snr_db > 33


def test_bit_exact_with_cpython_audioop() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        audioop = pytest.importorskip("audioop")  # removed in Python 3.13
    pcm = ALL_SAMPLES.tobytes()
    assert ulaw_encode(ALL_SAMPLES).tobytes() == audioop.lin2ulaw(pcm, 2)
    assert alaw_encode(ALL_SAMPLES).tobytes() == audioop.lin2alaw(pcm, 2)
    assert ulaw_decode(ALL_CODES).tobytes() == audioop.ulaw2lin(ALL_CODES.tobytes(), 2)
    assert alaw_decode(ALL_CODES).tobytes() == audioop.alaw2lin(ALL_CODES.tobytes(), 2)
