"""Fixtures shared by tests that play audio: a fast recording sink and an AudioOutput on it (closed after)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from voxcall.audio.output import AudioOutput, RecordingSink


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink(fast=True)


@pytest.fixture
async def output(sink: RecordingSink) -> AsyncIterator[AudioOutput]:
    output = AudioOutput(sink)
    yield output
    await output.close()
