"""``voxcall.telemetry`` is a floor, as ``voxcall.config`` is: every part may report to it, and it imports nothing
else of voxcall (so the core can trace without an import cycle, and the watchdog runs under any app)."""

from __future__ import annotations

from tests.test_layering import MODULES, imported_names, module_name, under


def test_telemetry_imports_nothing_else_of_voxcall() -> None:
    modules = [path for path in MODULES if under(module_name(path), "voxcall.telemetry")]
    assert len(modules) >= 4
    found = [f"{module_name(path)} imports {name}" for path in modules for name in imported_names(path)
             if under(name, "voxcall") and not under(name, "voxcall.telemetry")]
    assert found == []
