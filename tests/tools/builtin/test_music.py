"""The music library (a jail with fuzzy titles) and the music tools on an :class:`AudioOutput`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.audio.test_decode import write_tone
from tests.tools.builtin.conftest import SONGS
from voxcall.audio.output import AudioOutput, RecordingSink
from voxcall.tools import ToolError, ToolRegistry
from voxcall.tools.builtin.music import MAX_NAME_CHARS, MusicLibrary, register_music, similarity


@pytest.fixture
def library(music_dir: Path) -> MusicLibrary:
    return MusicLibrary(music_dir)


@pytest.fixture
def registry(music_dir: Path, output: AudioOutput) -> ToolRegistry:
    registry = ToolRegistry()
    register_music(registry, music_dir, output)
    return registry


# -- the library ---------------------------------------------------------------------------------------------


def test_lists_the_songs_inside_the_folder_only(library: MusicLibrary, music_dir: Path) -> None:
    tracks = library.tracks()
    assert [track.name for track in tracks] == sorted(["Alias.mp3", *SONGS], key=str.casefold)
    assert all(track.path.is_relative_to(music_dir.resolve()) for track in tracks)
    alias = next(track for track in tracks if track.name == "Alias.mp3")
    assert alias.path == (music_dir / "Blue in Green.mp3").resolve()  # a link within the folder is fine


def test_tracks_have_titles(library: MusicLibrary) -> None:
    track = library.find("jazz/Café del Mar.ogg")
    assert (track.title, track.relative_title) == ("Café del Mar", "jazz/Café del Mar")


def test_the_folder_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a folder"):
        MusicLibrary(tmp_path / "nowhere")


def test_songs_added_later_are_found(tmp_path: Path) -> None:
    library = MusicLibrary(tmp_path)
    with pytest.raises(ToolError, match="no songs"):
        library.find("anything")
    write_tone(tmp_path / "New Song.wav", seconds=0.1)
    assert library.find("new song").name == "New Song.wav"


@pytest.mark.parametrize(("query", "name"), [
    ("blue green", "Blue in Green.mp3"),
    ("Blue in Green", "Blue in Green.mp3"),
    ("BLUE", "Blue in Green.mp3"),
    ("so wat", "So What.flac"),
    ("cafe del mar", "jazz/Café del Mar.ogg"),
    ("CAFÉ", "jazz/Café del Mar.ogg"),
    ("jazz cafe", "jazz/Café del Mar.ogg"),
    ("月亮代表", "月亮代表我的心.m4a"),
    ("green onions", "Green Onions.wav"),
    ("So_What", "So What.flac"),
])
def test_fuzzy_titles(library: MusicLibrary, query: str, name: str) -> None:
    assert library.find(query).name == name


def test_diacritics_are_ignored_both_ways(tmp_path: Path) -> None:
    write_tone(tmp_path / "Manana.mp3", seconds=0.1)
    write_tone(tmp_path / "Beyoncé - Halo.flac", seconds=0.1)
    library = MusicLibrary(tmp_path)
    assert library.find("Mañana").name == "Manana.mp3"
    assert library.find("beyonce halo").name == "Beyoncé - Halo.flac"


def test_exact_relative_paths_win(library: MusicLibrary) -> None:
    assert library.find("Alias.mp3").name == "Alias.mp3"
    assert library.find("jazz/café del mar").name == "jazz/Café del Mar.ogg"
    assert library.find("./jazz//Café del Mar.ogg").name == "jazz/Café del Mar.ogg"


def test_similarity_prefers_the_closer_title() -> None:
    assert similarity("blue green", "Blue in Green") > similarity("blue green", "Green Onions")
    assert similarity("blue green", "Green Onions") < 0.6 <= similarity("blue green", "Blue in Green")
    assert similarity("", "Blue") == similarity("blue", "") == 0.0


def test_no_match_suggests_the_closest_titles(library: MusicLibrary) -> None:
    with pytest.raises(ToolError, match=r"no song matches 'Stairway to Heaven'; the closest titles are: .+, .+"):
        library.find("Stairway to Heaven")


@pytest.mark.parametrize("name", [
    "../../etc/passwd", "..", "jazz/../../outside/Secret.mp3", "..\\..\\windows\\win.ini",
    "/etc/passwd", "\\\\server\\share\\song.mp3", "C:\\music\\song.mp3", "c:song.mp3", "~/music/song.mp3",
    "song\x00.mp3",
])
def test_names_that_leave_the_folder_are_refused(library: MusicLibrary, name: str) -> None:
    with pytest.raises(ToolError, match="only be played from the music folder"):
        library.find(name)


def test_long_and_empty_names_are_refused(library: MusicLibrary) -> None:
    with pytest.raises(ToolError, match=f"at most {MAX_NAME_CHARS} characters"):
        library.find("blue " * 100)
    with pytest.raises(ToolError, match="give the title"):
        library.find("   ")


@pytest.mark.parametrize("name", ["Secret", "Secret.mp3", "linked/Secret.mp3", "Blue Outside", "loop.mp3"])
def test_songs_behind_links_out_of_the_folder_cannot_be_found(library: MusicLibrary, name: str) -> None:
    with pytest.raises(ToolError, match="no song matches"):
        library.find(name)


# -- the tools -----------------------------------------------------------------------------------------------


async def test_music_list(registry: ToolRegistry) -> None:
    result = await registry.call("music_list")
    assert result.output == ("6 songs: Alias, Blue in Green, Green Onions, Café del Mar, So What, 月亮代表我的心.")


async def test_music_play_plays_the_best_match(registry: ToolRegistry, output: AudioOutput,
                                               sink: RecordingSink, music_dir: Path) -> None:
    result = await registry.call("music_play", {"name": "blue green"})
    assert (result.is_error, result.output) == (False, "Playing Blue in Green.")
    assert output.now_playing == (music_dir / "Blue in Green.mp3").resolve()
    await output.wait()
    assert len(sink.audio()) == pytest.approx(12000, abs=50)


async def test_music_play_traversal_is_an_error_for_the_model(registry: ToolRegistry, output: AudioOutput) -> None:
    for name in ("../../etc/passwd", "/etc/passwd", "../outside/Secret.mp3"):
        result = await registry.call("music_play", {"name": name})
        assert result.is_error and "music folder" in result.output
    assert output.now_playing is None


async def test_music_play_unknown_title_lists_some(registry: ToolRegistry) -> None:
    result = await registry.call("music_play", {"name": "Bohemian Rhapsody"})
    assert result.is_error and result.output.startswith("no song matches 'Bohemian Rhapsody'; the closest titles")


async def test_music_play_an_unplayable_file_is_an_error(tmp_path: Path, output: AudioOutput) -> None:
    (tmp_path / "Broken.mp3").write_text("not audio")
    registry = ToolRegistry()
    register_music(registry, tmp_path, output)
    result = await registry.call("music_play", {"name": "broken"})
    assert result.is_error and result.output.startswith("cannot play Broken: ")
    assert str(tmp_path) not in result.output


async def test_music_play_random(registry: ToolRegistry, output: AudioOutput) -> None:
    result = await registry.call("music_play_random")
    assert not result.is_error and result.output.startswith("Playing ")
    assert output.state == "playing"


async def test_music_play_random_in_an_empty_folder(tmp_path: Path, output: AudioOutput) -> None:
    registry = ToolRegistry()
    register_music(registry, tmp_path, output)
    assert (await registry.call("music_play_random")).output == "the music folder has no songs"
    assert (await registry.call("music_list")).output == "The music folder has no songs."


async def test_music_stop_pause_and_resume(registry: ToolRegistry, output: AudioOutput) -> None:
    assert (await registry.call("music_stop")).output == "No music was playing."
    assert (await registry.call("music_pause")).output == "No music is playing."
    assert (await registry.call("music_resume")).output == "No music is loaded; play a song instead."
    await registry.call("music_play", {"name": "so what"})
    assert (await registry.call("music_pause")).output == "Music paused."
    assert output.state == "paused"
    output.speech_started()
    output.speech_finished()
    assert output.state == "paused"  # the user's pause outlasts the assistant's answer
    assert (await registry.call("music_resume")).output == "Music resumed."
    assert (await registry.call("music_stop")).output == "Music stopped."
    assert (await registry.call("music_stop")).output == "No music was playing."
    assert output.state == "stopped"


async def test_music_volume_tools(registry: ToolRegistry, output: AudioOutput) -> None:
    assert (await registry.call("music_set_volume", {"value": "half"})).output == "Music volume set to 50%."
    assert output.music_volume == 0.5
    assert (await registry.call("music_volume_up", {})).output == "Music volume up to 60%."
    assert (await registry.call("music_volume_down", {"step": 30})).output == "Music volume down to 30%."
    result = await registry.call("music_set_volume", {"value": "120%"})
    assert result.output == "Music volume set to 100% (clamped 120% to 100%)."
    result = await registry.call("music_set_volume", {"value": "very loud"})
    assert result.is_error and "not a volume" in result.output
    assert output.music_volume == 1.0


def test_tool_schemas(registry: ToolRegistry) -> None:
    assert [tool.name for tool in registry.tools] == [
        "music_play", "music_play_random", "music_list", "music_stop", "music_pause", "music_resume",
        "music_set_volume", "music_volume_up", "music_volume_down"]
    play = registry.get("music_play")
    assert play is not None and play.required == ["name"] and play.properties["name"]["type"] == "string"
    assert all(tool.description for tool in registry.tools)
