"""Layering: every module of ``voxcall`` imports downward only.

From the top: ``voxcall.cli`` (thin commands) over ``voxcall.server`` (the composition root), ``voxcall.app`` (the
web app: the routes of every edge) and ``voxcall.client``; then the protocol edges, ``voxcall.realtime``,
``voxcall.live`` (GPT-Live), ``voxcall.twilio`` (phone calls), ``voxcall.webrtc`` (browser calls) and
``voxcall.xiaozhi`` (voice devices), which know
nothing of each other; under them ``voxcall.serving`` (the session host, the gate: auth, admission, draining); all
over ``voxcall.core`` (the session core); under it ``voxcall.llm``, ``voxcall.speech`` and ``voxcall.tools``; and
``voxcall.audio`` at the bottom. ``voxcall.config`` (the settings tree), ``voxcall.language`` (language rules) and
``voxcall.validation`` (pydantic's errors as one problem) are read by every part and import none; so is
``voxcall.telemetry`` (the tracing API the core reports to, the watchdog: ``tests/telemetry/test_layering.py``).
``llm`` may import ``tools`` (backends offer tools and yield tool calls); the built-in tools that play sound
(``voxcall.tools.builtin``: music, volume) may import ``voxcall.audio``, the one way ``tools`` reaches another part.

Every import counts: ``import x`` and ``from x import y``, relative ones, and those inside functions or
``if TYPE_CHECKING:`` blocks (a type-only import still ties the layers together).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

TOP = ("voxcall.cli", "voxcall.server", "voxcall.app", "voxcall.client")
EDGES = ("voxcall.realtime", "voxcall.live", "voxcall.twilio", "voxcall.webrtc", "voxcall.xiaozhi")
SESSIONS = ("voxcall.core", "voxcall.serving", *EDGES)
PARTS = tuple(sorted(f"voxcall.{path.stem}" for path in (SRC / "voxcall").iterdir()
                    if (path.suffix == ".py" and path.stem != "__init__") or (path / "__init__.py").is_file()))
"""Every top-level part of voxcall (its packages and modules)."""


def floor(part: str) -> tuple[str, ...]:
    """What a floor part may not import: anything of voxcall's own but itself."""
    return tuple(other for other in PARTS if other != part)


FORBIDDEN: dict[str, tuple[str, ...]] = {
    "voxcall.config": floor("voxcall.config"),
    "voxcall.language": floor("voxcall.language"),
    "voxcall.validation": floor("voxcall.validation"),
    "voxcall.serving": (*EDGES, *TOP),
    **{edge: (*(other for other in EDGES if other != edge), *TOP) for edge in EDGES},
    "voxcall.core": (*EDGES, "voxcall.serving", *TOP, "voxcall.llm.local"),
    "voxcall.llm": (*SESSIONS, "voxcall.speech", "voxcall.audio", *TOP),
    "voxcall.speech": (*SESSIONS, "voxcall.llm", "voxcall.tools", *TOP),
    "voxcall.audio": (*SESSIONS, "voxcall.llm", "voxcall.tools", "voxcall.speech", *TOP),
    "voxcall.tools": (*SESSIONS, "voxcall.llm", "voxcall.speech", "voxcall.audio", *TOP),
}
"""For each part, the parts its modules must not import (prefixes of dotted module names)."""

ALLOWED: dict[tuple[str, str], str] = {
    ("voxcall.tools.builtin", "voxcall.audio"): "the music and volume tools drive the host's audio output",
    ("voxcall.webrtc", "voxcall.realtime"): "a WebRTC call carries the Realtime protocol's events on its data channel: "
                                            "it speaks them with the Realtime edge's connection",
}
"""Documented exceptions to :data:`FORBIDDEN`: (importing module prefix, imported prefix) and why."""

def under(name: str, prefix: str) -> bool:
    """Whether dotted ``name`` is ``prefix`` or inside it (``prefix`` ending in a dot: strictly inside it)."""
    if prefix.endswith("."):
        return name.startswith(prefix)
    return name == prefix or name.startswith(prefix + ".")


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path) -> Iterator[str]:
    """Every module (or ``module.name``) that ``path`` imports, wherever in the file the import stands."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing module's package
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            yield from (f"{base}.{alias.name}" for alias in node.names)  # a name may be a submodule


def violations(path: Path) -> list[str]:
    module = module_name(path)
    found = []
    for part, forbidden in FORBIDDEN.items():
        if not under(module, part):
            continue
        for name in imported_names(path):
            banned = [prefix for prefix in forbidden if under(name, prefix)]
            excused = [target for (importer, target) in ALLOWED if under(module, importer) and under(name, target)]
            if banned and not excused:
                found.append(f"{module} imports {name}")
    return found


MODULES = sorted((SRC / "voxcall").rglob("*.py"))


def test_the_source_tree_is_found() -> None:
    assert len(MODULES) > 50
    assert {"voxcall.config", "voxcall.tools.registry", "voxcall.core.session"} <= {module_name(p) for p in MODULES}


@pytest.mark.parametrize("path", MODULES, ids=lambda path: module_name(path))
def test_imports_point_downward(path: Path) -> None:
    assert violations(path) == []


def test_every_kind_of_import_is_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "voxcall" / "tools"
    package.mkdir(parents=True)
    (package / "sample.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "import voxcall.core.session\n"
        "from voxcall import llm\n"
        "from ..speech import tts\n"
        "if TYPE_CHECKING:\n    from voxcall.cli import app\n"
        "def later() -> None:\n    from voxcall.audio import resample\n",
        encoding="utf-8")
    monkeypatch.setitem(globals(), "SRC", tmp_path)
    assert sorted(violations(package / "sample.py")) == [
        "voxcall.tools.sample imports voxcall.audio.resample",
        "voxcall.tools.sample imports voxcall.cli.app",
        "voxcall.tools.sample imports voxcall.core.session",
        "voxcall.tools.sample imports voxcall.llm",
        "voxcall.tools.sample imports voxcall.speech.tts",
    ]
