"""``voxcall.evaluation`` talks to servers over the wire only: it imports no part of the server (so it evaluates
voxcall exactly as any other server), and only the command line imports it."""

from __future__ import annotations

from tests.test_layering import MODULES, imported_names, module_name, under

SERVER_PARTS = ("voxcall.core", "voxcall.serving", "voxcall.server", "voxcall.realtime", "voxcall.live",
                "voxcall.twilio", "voxcall.webrtc", "voxcall.llm", "voxcall.tools", "voxcall.config")


def test_evaluation_imports_no_part_of_the_server() -> None:
    modules = [path for path in MODULES if under(module_name(path), "voxcall.evaluation")]
    assert len(modules) >= 8
    found = [f"{module_name(path)} imports {name}" for path in modules for name in imported_names(path)
             if any(under(name, part) for part in SERVER_PARTS)]
    assert found == []


def test_only_the_command_line_imports_evaluation() -> None:
    found = [module_name(path) for path in MODULES
             if not under(module_name(path), "voxcall.evaluation")
             and any(under(name, "voxcall.evaluation") for name in imported_names(path))]
    assert found == ["voxcall.cli"]
