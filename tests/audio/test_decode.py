"""Decoding audio files with PyAV: every supported format, rates, chunks, downmixing and clear errors.

The fixtures are generated here at test time with PyAV's encoders; :func:`write_tone` is shared with the output
and music tests.
"""

from __future__ import annotations

from itertools import chain
from pathlib import Path

import av
import numpy as np
import pytest

from voxcall.audio.decode import AUDIO_SUFFIXES, AudioFileError, AudioFileReader, decode_file, iter_decode

# suffix → (container, encoder, sample rate); .ogg holds Vorbis and .opus holds Opus, both in Ogg
ENCODERS = {
    ".mp3": ("mp3", "libmp3lame", 44100),
    ".wav": ("wav", "pcm_s16le", 22050),
    ".flac": ("flac", "flac", 44100),
    ".ogg": ("ogg", "vorbis", 44100),
    ".opus": ("ogg", "libopus", 48000),
    ".aac": ("adts", "aac", 48000),
    ".m4a": ("mp4", "aac", 44100),
}
AMPLITUDE = round(0.3 * 32767)


def write_tone(path: Path, seconds: float = 1.0, *, right: float = 1.0) -> Path:
    """Encode a stereo 440 Hz tone at 30 % of full scale into ``path``, in the format its suffix names.

    The right channel is the left one times ``right`` (-1.0: in opposite phase).
    """
    container, encoder, rate = ENCODERS[path.suffix]
    t = np.arange(round(seconds * rate)) / rate
    left = AMPLITUDE * np.sin(2 * np.pi * 440 * t)
    interleaved = np.stack([left, right * left], axis=1).round().astype(np.int16).reshape(1, -1)
    source = av.AudioFrame.from_ndarray(interleaved, format="s16", layout="stereo")
    source.sample_rate = rate
    with av.open(str(path), "w", format=container) as out:
        stream = out.add_stream(encoder, rate=rate, layout="stereo")
        if encoder == "vorbis":  # FFmpeg's own Vorbis encoder is marked experimental
            stream.codec_context.options = {"strict": "experimental"}
        resampler = av.AudioResampler(format=stream.codec_context.format.name, layout="stereo", rate=rate,
                                      frame_size=1024)
        pts = 0
        for frame in chain(resampler.resample(source), resampler.resample(None)):
            frame.pts, pts = pts, pts + frame.samples
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path


@pytest.fixture(scope="session")
def tones(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A one-second tone in every supported format, by suffix."""
    folder = tmp_path_factory.mktemp("tones")
    return {suffix: write_tone(folder / f"tone{suffix}") for suffix in ENCODERS}


def test_every_supported_suffix_has_a_fixture() -> None:
    assert {*ENCODERS} <= AUDIO_SUFFIXES


@pytest.mark.parametrize("suffix", list(ENCODERS))
def test_each_format_decodes_to_mono_int16_of_the_right_length(tones: dict[str, Path], suffix: str) -> None:
    pcm = decode_file(tones[suffix])
    assert pcm.dtype == np.int16 and pcm.ndim == 1
    assert abs(len(pcm) / 24000 - 1.0) <= 0.050  # encoder delay and padding stay within 50 ms
    assert 0.85 * AMPLITUDE <= np.abs(pcm).max() <= 1.15 * AMPLITUDE


@pytest.mark.parametrize("rate", [8000, 16000, 44100])
def test_decodes_at_the_requested_rate(tones: dict[str, Path], rate: int) -> None:
    assert len(decode_file(tones[".flac"], rate)) == pytest.approx(rate, abs=rate * 0.01)


def test_stereo_is_downmixed_not_one_channel_picked(tmp_path: Path) -> None:
    opposite = decode_file(write_tone(tmp_path / "opposite.wav", right=-1.0))
    assert np.abs(opposite).max() <= 2  # the channels cancel out: both were mixed


def test_iter_decode_yields_chunks_that_make_up_the_whole_file(tones: dict[str, Path]) -> None:
    chunks = list(iter_decode(tones[".mp3"], 24000, chunk_ms=100))
    assert {len(chunk) for chunk in chunks[:-1]} == {2400}
    assert 0 < len(chunks[-1]) <= 2400
    np.testing.assert_array_equal(np.concatenate(chunks), decode_file(tones[".mp3"]))


def test_reader_stops_after_close_and_close_is_idempotent(tones: dict[str, Path]) -> None:
    reader = AudioFileReader(tones[".wav"], 16000, chunk_ms=50)
    first = reader.read()
    assert first is not None and len(first) == 800
    reader.close()
    reader.close()
    assert reader.read() is None


def test_reader_works_as_a_context_manager(tones: dict[str, Path]) -> None:
    with AudioFileReader(tones[".ogg"]) as reader:
        assert reader.read() is not None
    assert reader.read() is None


@pytest.mark.parametrize(("rate", "chunk_ms"), [(0, 100), (24000, 0)])
def test_rejects_bad_rate_or_chunk(tones: dict[str, Path], rate: int, chunk_ms: int) -> None:
    with pytest.raises(ValueError, match="positive"):
        AudioFileReader(tones[".wav"], rate, chunk_ms)


def test_missing_file_is_an_audio_file_error(tmp_path: Path) -> None:
    with pytest.raises(AudioFileError, match=r"cannot open missing\.mp3"):
        decode_file(tmp_path / "missing.mp3")


def test_text_file_is_an_audio_file_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.mp3"
    path.write_text("not audio at all\n" * 50)
    with pytest.raises(AudioFileError, match=r"notes\.mp3"):
        decode_file(path)


def test_content_of_another_format_is_an_audio_file_error(tones: dict[str, Path], tmp_path: Path) -> None:
    disguised = tmp_path / "disguised.flac"
    disguised.write_bytes(tones[".mp3"].read_bytes())  # read by the demuxer its suffix names, never probed
    with pytest.raises(AudioFileError, match=r"disguised\.flac"):
        decode_file(disguised)


def test_unsupported_suffix_names_the_supported_ones(tmp_path: Path) -> None:
    path = tmp_path / "playlist.m3u8"
    path.write_text("#EXTM3U\n/etc/passwd\n")
    with pytest.raises(AudioFileError, match=r"unsupported audio file type '\.m3u8'.*\.flac.*\.mp3"):
        decode_file(path)


def test_error_names_the_file_but_not_its_folder(tmp_path: Path) -> None:
    with pytest.raises(AudioFileError) as caught:
        decode_file(tmp_path / "secret" / "song.wav")
    assert "song.wav" in str(caught.value)
    assert str(tmp_path) not in str(caught.value)
