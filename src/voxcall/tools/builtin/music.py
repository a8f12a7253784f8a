"""The ``music`` built-in: play songs from the operator's music folder on the host's :class:`AudioOutput`.

The folder is a jail. Only files found by scanning it can be played, and a file is listed only when its real path
(symlinks resolved) lies inside the folder's real path, so a link pointing elsewhere is never followed. A name
the model passes is a title to match, or a path relative to the folder; an absolute path, a ``..`` component or
an over-long name is refused outright. Titles match fuzzily (case, accents, word order, typos and partial titles
forgiven: "blue green" finds "Blue in Green.mp3", "cafe" finds "Café del Mar.flac").
"""

from __future__ import annotations

import asyncio
import difflib
import itertools
import logging
import os
import random
import re
import unicodedata
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath

from voxcall.audio.decode import AUDIO_SUFFIXES, AudioFileError
from voxcall.audio.output import AudioOutput
from voxcall.tools.builtin.volume import set_volume_text, step_volume_text
from voxcall.tools.registry import ToolError, ToolRegistry

__all__ = ["MAX_NAME_CHARS", "MAX_TRACKS", "MIN_SCORE", "MusicLibrary", "MusicTools", "Track", "register_music",
           "similarity"]

log = logging.getLogger(__name__)

MAX_NAME_CHARS = 200
"""The longest song name a tool accepts."""
MAX_TRACKS = 10_000
"""Scanning stops after this many songs, so a huge folder cannot stall a tool call."""
MIN_SCORE = 0.6
"""How similar (0..1) a title must be to a request to be played for it."""
_TYPO = 0.75  # how alike two words must be for one to count as a misspelling of the other
_LISTED = 50  # titles music_list names before saying "and N more"
_SUGGESTED = 5  # titles an error for an unknown song suggests
_PLAY_RATE_LIMIT = (10, 10.0)  # each play opens a file and starts a decoder


@dataclass(frozen=True)
class Track:
    """A playable song: its real path (inside the library) and its path relative to the library, ``/``-separated."""

    path: Path
    name: str

    @property
    def title(self) -> str:
        """The file name without its suffix: what the song is called."""
        return Path(self.name).stem

    @property
    def relative_title(self) -> str:
        """The relative path without the suffix (``jazz/Blue in Green``): the title with its folders."""
        return self.name.removesuffix(Path(self.name).suffix)


def _fold(text: str) -> str:
    """Text for comparing titles: accents stripped, case folded, punctuation and ``_`` turned into spaces."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()
    return " ".join("".join(ch if ch.isalnum() else " " for ch in bare).split())


class _Query:
    """A requested title, prepared to be compared with many titles: difflib keeps the query's side indexed, and
    each title word is scored once however many titles share it."""

    def __init__(self, query: str) -> None:
        text = _fold(query)
        self._words = text.split()
        self._word_matchers = [self._matcher(word) for word in self._words]
        self._whole = self._matcher(text)
        self._word_scores: dict[str, list[float]] = {}  # title word → its score against each query word

    @staticmethod
    def _matcher(text: str) -> difflib.SequenceMatcher[str]:
        matcher = difflib.SequenceMatcher[str](None, autojunk=False)
        matcher.set_seq2(text)
        return matcher

    def score(self, title: str) -> float:
        """How well ``title`` answers the query, 0..1: mostly how many of the query's words the title has, plus a
        little of their overall likeness (so the closest of several titles with the same words wins)."""
        folded = _fold(title)
        title_words = folded.split()
        if not self._words or not title_words:
            return 0.0
        per_word = [self._scores(word) for word in title_words]
        coverage = sum(max(scores[i] for scores in per_word) for i in range(len(self._words))) / len(self._words)
        self._whole.set_seq1(folded)
        if not coverage:  # no word in common: not a match, only ranked for suggestions, by a cheaper likeness
            return 0.3 * self._whole.quick_ratio()
        return 0.7 * coverage + 0.3 * self._whole.ratio()

    def _scores(self, candidate: str) -> list[float]:
        """How well ``candidate`` (a title word) matches each query word: 1 when equal, 0.9 when it contains it
        (a prefix, or a run of Chinese characters inside an unspaced title), else their likeness when close
        enough to be a typo, else 0."""
        scores = self._word_scores.get(candidate)
        if scores is None:
            scores = [self._word_score(word, matcher, candidate)
                      for word, matcher in zip(self._words, self._word_matchers, strict=True)]
            self._word_scores[candidate] = scores
        return scores

    @staticmethod
    def _word_score(word: str, matcher: difflib.SequenceMatcher[str], candidate: str) -> float:
        if word == candidate:
            return 1.0
        if len(word) >= 2 and word in candidate:
            return 0.9
        matcher.set_seq1(candidate)
        if matcher.real_quick_ratio() < _TYPO or matcher.quick_ratio() < _TYPO:
            return 0.0
        ratio = matcher.ratio()
        return ratio if ratio >= _TYPO else 0.0


def similarity(query: str, title: str) -> float:
    """How well ``title`` answers ``query``, 0..1 (see :data:`MIN_SCORE`); case, accents and punctuation aside."""
    return _Query(query).score(title)


def _check_name(name: str) -> str:
    """``name`` stripped, or a :class:`ToolError` when it is empty, too long or tries to leave the folder."""
    name = name.strip()
    if not name:
        raise ToolError("give the title of a song")
    if len(name) > MAX_NAME_CHARS:
        raise ToolError(f"a song name is at most {MAX_NAME_CHARS} characters")
    parts = re.split(r"[\\/]", name)
    if "\x00" in name or name.startswith(("/", "\\", "~")) or PureWindowsPath(name).drive or ".." in parts:
        raise ToolError("songs can only be played from the music folder: give a title or a path inside it, "
                        "without '..' or an absolute path")
    return "/".join(part for part in parts if part not in ("", "."))


class MusicLibrary:
    """The songs in one folder (and its subfolders), and finding one by title. Raises ``ValueError`` when
    ``music_dir`` is not a folder.

    The folder is scanned on every call, so songs added while the server runs are found; hidden files and
    folders are skipped and folders reached through symlinks are not entered.
    """

    def __init__(self, music_dir: str | os.PathLike[str]) -> None:
        root = Path(music_dir).expanduser()
        if not root.is_dir():
            raise ValueError(f"the music folder {str(root)!r} does not exist or is not a folder")
        self.root = root.resolve()

    def tracks(self) -> list[Track]:
        """Every playable song, sorted by relative path, case-insensitively (at most :data:`MAX_TRACKS`)."""
        found = list(itertools.islice(self._scan(), MAX_TRACKS + 1))
        if len(found) > MAX_TRACKS:
            log.warning("music folder %s holds more than %d songs; the rest are ignored", self.root, MAX_TRACKS)
            del found[MAX_TRACKS:]
        return sorted(found, key=lambda track: track.name.casefold())

    def find(self, name: str) -> Track:
        """The song called ``name``: its path relative to the folder (with or without suffix), else the title
        most similar to it. Raises :class:`ToolError` for a refused name or when nothing is similar enough."""
        wanted = _check_name(name)
        tracks = self.tracks()
        if not tracks:
            raise ToolError("the music folder has no songs")
        exact = wanted.casefold()
        for track in tracks:
            if exact in (track.name.casefold(), track.relative_title.casefold()):
                return track
        query = _Query(wanted)
        scores = {track: max(query.score(key) for key in {track.title, track.relative_title}) for track in tracks}
        ranked = sorted(tracks, key=lambda track: (-scores[track], len(track.name)))
        if scores[ranked[0]] < MIN_SCORE:
            closest = ", ".join(track.title for track in ranked[:_SUGGESTED])
            raise ToolError(f"no song matches {name.strip()!r}; the closest titles are: {closest}")
        return ranked[0]

    def _scan(self) -> Iterator[Track]:
        """The songs in the folder, as found."""
        for dirpath, dirnames, filenames in os.walk(self.root):  # does not enter linked folders
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for filename in filenames:
                if filename.startswith(".") or Path(filename).suffix.lower() not in AUDIO_SUFFIXES:
                    continue
                track = self._track(Path(dirpath, filename))
                if track is not None:
                    yield track

    def _track(self, path: Path) -> Track | None:
        """The track for a file found in the folder, or ``None`` when its real path leaves the folder."""
        try:
            real = path.resolve()
        except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
            log.info("music: skipped %s (a symlink loop)", path)
            return None
        if not real.is_relative_to(self.root) or not real.is_file():
            log.info("music: skipped %s (it points outside the music folder, or nowhere)", path)
            return None
        return Track(real, path.relative_to(self.root).as_posix())


class MusicTools:
    """The music tools: each method is one tool, playing from ``library`` on ``output``."""

    def __init__(self, library: MusicLibrary, output: AudioOutput) -> None:
        self.library = library
        self.output = output

    async def music_list(self) -> str:
        """List the songs you can play."""
        tracks = await asyncio.to_thread(self.library.tracks)
        if not tracks:
            return "The music folder has no songs."
        titles = ", ".join(track.title for track in tracks[:_LISTED])
        more = f", and {len(tracks) - _LISTED} more" if len(tracks) > _LISTED else ""
        return f"{len(tracks)} song{'s' if len(tracks) > 1 else ''}: {titles}{more}."

    async def music_play(self, name: str) -> str:
        """Play a song from the music folder, replacing what is playing.

        Args:
            name: The song's title, or part of it (matched loosely: "blue green" finds "Blue in Green").
        """
        track = await asyncio.to_thread(self.library.find, name)
        return await self._play(track)

    async def music_play_random(self) -> str:
        """Play a song picked at random from the music folder."""
        tracks = await asyncio.to_thread(self.library.tracks)
        if not tracks:
            raise ToolError("the music folder has no songs")
        return await self._play(random.choice(tracks))

    async def music_stop(self) -> str:
        """Stop the music."""
        was_loaded = self.output.now_playing is not None
        await self.output.stop()
        return "Music stopped." if was_loaded else "No music was playing."

    async def music_pause(self) -> str:
        """Pause the music, to be resumed later where it stopped."""
        if self.output.now_playing is None:
            return "No music is playing."
        self.output.pause()
        return "Music paused."

    async def music_resume(self) -> str:
        """Resume the music after a pause."""
        if self.output.now_playing is None:
            return "No music is loaded; play a song instead."
        self.output.resume()
        return "Music resumed."

    async def music_set_volume(self, value: float | str) -> str:
        """Set the music's volume (not your own voice's).

        Args:
            value: The level: a number (0.8, or 50 for 50%), a percentage such as "80%", a change such as "+10%",
                or a word: "max", "min", "half", "mute" (also 最大, 最小, 一半, 静音).
        """
        self.output.music_volume, text = set_volume_text("Music volume", self.output.music_volume, value)
        return text

    async def music_volume_up(self, step: float = 0.1) -> str:
        """Make the music louder.

        Args:
            step: How much louder: 0.1 or 10 means 10 percentage points.
        """
        self.output.music_volume, text = step_volume_text("Music volume", self.output.music_volume, step, up=True)
        return text

    async def music_volume_down(self, step: float = 0.1) -> str:
        """Make the music quieter.

        Args:
            step: How much quieter: 0.1 or 10 means 10 percentage points.
        """
        self.output.music_volume, text = step_volume_text("Music volume", self.output.music_volume, step,
                                                          up=False)
        return text

    async def _play(self, track: Track) -> str:
        try:
            await self.output.play(track.path)
        except AudioFileError as exc:
            raise ToolError(f"cannot play {track.title}: {exc}") from None
        return f"Playing {track.title}."


def register_music(registry: ToolRegistry, music_dir: str | os.PathLike[str], output: AudioOutput) -> MusicTools:
    """Register the music tools, playing from ``music_dir`` on ``output``, and return them.

    Raises ``ValueError`` when ``music_dir`` is not a folder or a tool name is taken.
    """
    tools = MusicTools(MusicLibrary(music_dir), output)
    registry.register(tools.music_play, rate_limit=_PLAY_RATE_LIMIT)
    registry.register(tools.music_play_random, rate_limit=_PLAY_RATE_LIMIT)
    others: tuple[Callable[..., Awaitable[str]], ...] = (
        tools.music_list, tools.music_stop, tools.music_pause, tools.music_resume, tools.music_set_volume,
        tools.music_volume_up, tools.music_volume_down)
    for method in others:
        registry.register(method)
    return tools
