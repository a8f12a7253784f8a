"""Wire audio formats: the GA object form, the beta names, and clear errors for everything else."""

from __future__ import annotations

from typing import Any

import pytest

from voxcall.audio import PCM24K, PCMA, PCMU, AudioFormat, AudioFormatError, parse_format


@pytest.mark.parametrize(("value", "expected"), [
    ({"type": "audio/pcm", "rate": 24000}, PCM24K),
    ({"type": "audio/pcm"}, PCM24K),
    ({"type": "audio/pcm", "rate": None}, PCM24K),
    ({"type": "audio/pcmu"}, PCMU),
    ({"type": "audio/pcma"}, PCMA),
    ({"type": "audio/pcmu", "rate": 8000}, PCMU),
    ("pcm16", PCM24K),
    ("g711_ulaw", PCMU),
    ("g711_alaw", PCMA),
    (PCMA, PCMA),
])
def test_parse_accepts_ga_objects_and_beta_names(value: Any, expected: AudioFormat) -> None:
    assert parse_format(value) == expected


def test_formats_know_their_rates_and_widths() -> None:
    assert (PCM24K.rate, PCMU.rate, PCMA.rate) == (24000, 8000, 8000)
    assert (PCM24K.sample_width, PCMU.sample_width, PCMA.sample_width) == (2, 1, 1)


def test_to_wire_is_the_ga_form() -> None:
    assert PCM24K.to_wire() == {"type": "audio/pcm", "rate": 24000}
    assert PCMU.to_wire() == {"type": "audio/pcmu"}
    assert PCMA.to_wire() == {"type": "audio/pcma"}
    assert all(parse_format(fmt.to_wire()) == fmt for fmt in (PCM24K, PCMU, PCMA))


@pytest.mark.parametrize(("value", "message"), [
    ({"type": "audio/pcm", "rate": 16000}, "only supported at 24000 Hz"),
    ({"type": "audio/pcm", "rate": True}, "only supported at 24000 Hz"),
    ({"type": "audio/pcmu", "rate": 16000}, "only supported at 8000 Hz"),
    ({"type": "audio/opus"}, "unsupported audio format type 'audio/opus'"),
    ({"rate": 24000}, "unsupported audio format type None"),
    ({"type": "audio/pcm", "channels": 2}, "unknown audio format field(s) ['channels']"),
    ("opus", "unsupported audio format 'opus'"),
    ("audio/pcm", "unsupported audio format 'audio/pcm'"),
    (24000, "must be an object or a string, not int"),
])
def test_parse_rejects_unsupported_formats(value: Any, message: str) -> None:
    with pytest.raises(AudioFormatError) as info:
        parse_format(value)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_a_format_cannot_be_built_at_the_wrong_rate() -> None:
    with pytest.raises(AudioFormatError, match="only supported at 8000 Hz"):
        AudioFormat("audio/pcma", 16000)
