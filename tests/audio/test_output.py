"""The audio output arbiter: music versus speech (the sinks are tested in test_sinks.py).

Playback runs against ``RecordingSink(fast=True)``: writes are recorded, not paced, and a test waits for playback to
reach a chunk with ``wait_for_chunks``. Pausing is checked by what the sink received after the pause: nothing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from tests.audio.test_decode import AMPLITUDE, write_tone
from voxcall.audio.decode import AudioFileError
from voxcall.audio.output import AudioOutput, NullSink, RecordingSink

QUIET = 0.05  # seconds a paused player is given to (wrongly) write something


@pytest.fixture(scope="module")
def song(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tone long enough never to end during a test (the fast sink plays it in well under a second)."""
    return write_tone(tmp_path_factory.mktemp("music") / "long.wav", seconds=20.0)


@pytest.fixture(scope="module")
def short_song(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tone(tmp_path_factory.mktemp("music") / "short.flac", seconds=0.5)




async def playing(output: AudioOutput, sink: RecordingSink, song: Path) -> None:
    """Start ``song`` and wait until some of it was played."""
    await output.play(song)
    await sink.wait_for_chunks(len(sink.chunks) + 2)


async def played_after(sink: RecordingSink, count: int) -> int:
    """Wait a little, then return how many chunks were written beyond ``count``."""
    await asyncio.sleep(QUIET)
    return len(sink.chunks) - count


async def next_gain(sink: RecordingSink) -> float:
    """The gain of the next chunk written."""
    count = len(sink.chunks)
    await sink.wait_for_chunks(count + 1)
    return sink.chunks[count].gain


def only_this_task() -> bool:
    return asyncio.all_tasks() == {asyncio.current_task()}


# -- playback ------------------------------------------------------------------------------------------------


async def test_a_track_plays_to_its_end_in_chunks(output: AudioOutput, sink: RecordingSink,
                                                  short_song: Path) -> None:
    await output.play(short_song)
    assert (output.state, output.now_playing) == ("playing", short_song)
    await output.wait()
    assert (output.state, output.now_playing) == ("stopped", None)
    assert len(sink.audio()) == pytest.approx(12000, abs=24)  # 0.5 s at the sink's 24 kHz
    assert max(len(chunk.pcm) for chunk in sink.chunks) == 1200  # 50 ms chunks
    assert {chunk.gain for chunk in sink.chunks} == {1.0}
    assert only_this_task()


async def test_music_is_decoded_at_the_sink_rate(song: Path) -> None:
    sink = RecordingSink(16000, fast=True)
    output = AudioOutput(sink, chunk_ms=100)
    await playing(output, sink, song)
    assert len(sink.chunks[0].pcm) == 1600
    await output.close()
    assert sink.closed


async def test_play_replaces_the_current_track(output: AudioOutput, sink: RecordingSink, song: Path,
                                               short_song: Path) -> None:
    await playing(output, sink, song)
    await output.play(short_song)
    assert output.now_playing == short_song
    await output.wait()
    assert only_this_task()


async def test_an_unplayable_file_raises_and_the_music_plays_on(output: AudioOutput, sink: RecordingSink,
                                                                song: Path, tmp_path: Path) -> None:
    await playing(output, sink, song)
    broken = tmp_path / "broken.mp3"
    broken.write_text("not audio")
    with pytest.raises(AudioFileError):
        await output.play(broken)
    assert (output.state, output.now_playing) == ("playing", song)
    await sink.wait_for_chunks(len(sink.chunks) + 1)


# -- stop ----------------------------------------------------------------------------------------------------


async def test_stop_is_idempotent_and_leaves_no_task(output: AudioOutput, sink: RecordingSink, song: Path) -> None:
    await output.stop()
    await playing(output, sink, song)
    await output.stop()
    await output.stop()
    assert (output.state, output.now_playing) == ("stopped", None)
    assert only_this_task()
    assert await played_after(sink, len(sink.chunks)) == 0


async def test_stop_silences_what_the_sink_still_holds(output: AudioOutput, sink: RecordingSink,
                                                       song: Path) -> None:
    await playing(output, sink, song)
    flushes = sink.flushes
    await output.stop()
    assert sink.flushes > flushes


# -- speech --------------------------------------------------------------------------------------------------


async def test_speech_pauses_the_music_and_its_end_resumes_it(output: AudioOutput, sink: RecordingSink,
                                                               song: Path) -> None:
    await playing(output, sink, song)
    flushes = sink.flushes
    output.speech_started()
    count = len(sink.chunks)
    assert output.state == "paused"
    assert sink.flushes == flushes + 1  # the buffered music stops at once, not after the device drains
    assert await played_after(sink, count) == 0
    output.speech_finished()
    assert output.state == "playing"
    await sink.wait_for_chunks(count + 1)


async def test_music_comes_back_only_when_every_speaker_has_finished(output: AudioOutput, sink: RecordingSink,
                                                                     song: Path) -> None:
    """Sessions share the host output: one session's speech ending must not bring the music back over another's."""
    await playing(output, sink, song)
    output.speech_started()
    output.speech_started()
    output.speech_finished()
    count = len(sink.chunks)
    assert output.state == "paused" and output.speakers == 1
    assert await played_after(sink, count) == 0
    output.speech_finished()
    assert output.state == "playing" and output.speakers == 0
    output.speech_finished()  # unmatched: ignored, never below zero
    output.speech_started()
    assert output.state == "paused"
    output.speech_finished()


async def test_speech_ducks_the_music_under_the_duck_policy(song: Path) -> None:
    sink = RecordingSink(fast=True)
    output = AudioOutput(sink, speech_policy="duck", duck_gain=0.25)
    await playing(output, sink, song)
    output.speech_started()
    assert output.state == "playing"
    assert await next_gain(sink) == 0.25
    output.speech_finished()
    assert await next_gain(sink) == 1.0
    await output.close()


async def test_a_user_pause_outlasts_speech(output: AudioOutput, sink: RecordingSink, song: Path) -> None:
    await playing(output, sink, song)
    output.pause()
    output.speech_started()
    output.speech_finished()
    count = len(sink.chunks)
    assert output.state == "paused"
    assert await played_after(sink, count) == 0
    output.resume()
    assert output.state == "playing"
    await sink.wait_for_chunks(count + 1)


async def test_a_user_pause_during_speech_outlasts_it(output: AudioOutput, sink: RecordingSink, song: Path) -> None:
    await playing(output, sink, song)
    output.speech_started()
    output.pause()
    output.speech_finished()
    assert output.state == "paused"
    assert await played_after(sink, len(sink.chunks)) == 0


async def test_resume_during_speech_waits_for_the_speech_to_end(output: AudioOutput, sink: RecordingSink,
                                                                song: Path) -> None:
    await playing(output, sink, song)
    output.pause()
    output.speech_started()
    output.resume()
    count = len(sink.chunks)
    assert output.state == "paused"
    assert await played_after(sink, count) == 0
    output.speech_finished()
    await sink.wait_for_chunks(count + 1)


async def test_music_stopped_during_speech_stays_stopped(output: AudioOutput, sink: RecordingSink,
                                                         song: Path) -> None:
    await playing(output, sink, song)
    output.speech_started()
    await output.stop()
    output.speech_finished()
    assert (output.state, output.now_playing) == ("stopped", None)
    assert await played_after(sink, len(sink.chunks)) == 0
    assert only_this_task()


async def test_a_track_that_ends_during_speech_stays_ended(short_song: Path) -> None:
    sink = RecordingSink(fast=True)
    output = AudioOutput(sink, speech_policy="duck")
    await output.play(short_song)
    output.speech_started()
    await output.wait()
    output.speech_finished()
    assert output.state == "stopped"
    assert await played_after(sink, len(sink.chunks)) == 0


async def test_play_during_speech_starts_when_the_speech_ends(output: AudioOutput, sink: RecordingSink,
                                                              song: Path) -> None:
    output.speech_started()
    await output.play(song)
    assert output.state == "paused"
    assert await played_after(sink, 0) == 0
    output.speech_finished()
    await sink.wait_for_chunks(1)


async def test_play_clears_a_user_pause(output: AudioOutput, sink: RecordingSink, song: Path) -> None:
    await playing(output, sink, song)
    output.pause()
    await playing(output, sink, song)
    assert output.state == "playing"


async def test_pause_without_music_does_nothing(output: AudioOutput) -> None:
    output.pause()
    assert output.state == "stopped"


# -- volume --------------------------------------------------------------------------------------------------


async def test_volume_changes_reach_the_recorded_gain_and_ducking_scales_them(song: Path) -> None:
    sink = RecordingSink(fast=True)
    output = AudioOutput(sink, speech_policy="duck", duck_gain=0.2)
    await playing(output, sink, song)
    output.music_volume = 0.5
    assert await next_gain(sink) == 0.5
    output.speech_started()
    assert await next_gain(sink) == pytest.approx(0.1)
    output.speech_finished()
    assert await next_gain(sink) == 0.5
    await output.close()


async def test_recorded_audio_has_the_gain_applied(output: AudioOutput, sink: RecordingSink, song: Path) -> None:
    output.music_volume = 0.5
    await playing(output, sink, song)
    await output.stop()
    assert np.abs(sink.audio()).max() == pytest.approx(AMPLITUDE / 2, rel=0.02)


def test_volume_and_options_are_checked() -> None:
    output = AudioOutput(NullSink())
    with pytest.raises(ValueError, match=r"within 0\.\.1"):
        output.music_volume = 1.5
    with pytest.raises(ValueError, match="speech_policy"):
        AudioOutput(NullSink(), speech_policy="mute")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="duck_gain"):
        AudioOutput(NullSink(), duck_gain=2.0)
