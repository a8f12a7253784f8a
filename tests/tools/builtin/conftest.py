"""A music folder for the music tools, generated once per test session, with traps for the jail."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.audio.test_decode import write_tone

SONGS = ("Blue in Green.mp3", "So What.flac", "jazz/Café del Mar.ogg", "月亮代表我的心.m4a", "Green Onions.wav")
"""The songs of the folder, relative to it; ``Alias.mp3`` (a link to "Blue in Green.mp3") is listed too."""


@pytest.fixture(scope="session")
def music_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``SONGS`` plus what must not be listed: hidden and non-audio files, links leading out of the folder
    (a file, a folder) and a link loop. ``../outside`` holds the songs the links point at."""
    base = tmp_path_factory.mktemp("jail")
    root, outside = base / "music", base / "outside"
    for name in SONGS:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        write_tone(root / name, seconds=0.5)
    outside.mkdir()
    write_tone(outside / "Secret.mp3", seconds=0.5)
    write_tone(outside / "Blue Outside.mp3", seconds=0.5)
    write_tone(root / ".Hidden.mp3", seconds=0.5)
    (root / "notes.txt").write_text("not a song")
    (root / "Alias.mp3").symlink_to(root / "Blue in Green.mp3")
    (root / "Secret.mp3").symlink_to(outside / "Secret.mp3")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "loop.mp3").symlink_to(root / "loop.mp3")
    return root


