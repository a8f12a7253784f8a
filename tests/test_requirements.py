"""The test-dependency helper: a missing dependency skips on a developer's machine and fails under CI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.requirements import in_ci, require_module, require_node_packages, require_package_dir, require_program


@pytest.mark.parametrize(("value", "expected"), [("true", True), ("1", True), ("", False), ("false", False),
                                                 ("0", False), (None, False)])
def test_ci_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch, value: str | None, expected: bool) -> None:
    monkeypatch.delenv("CI", raising=False)
    if value is not None:
        monkeypatch.setenv("CI", value)
    assert in_ci() is expected


def test_a_present_module_is_returned() -> None:
    assert require_module("json").dumps([]) == "[]"


@pytest.mark.parametrize("need", [lambda: require_module("no_such_module_here"),
                                  lambda: require_package_dir("no_such_package_here"),
                                  lambda: require_program("no-such-program-here")])
def test_a_missing_dependency_skips_outside_ci_and_fails_under_it(monkeypatch: pytest.MonkeyPatch,
                                                                  need: Callable[[], object]) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"no.such.\w+.here"):
        need()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must install every test dependency"):
        need()


def test_node_packages_that_cannot_be_installed_skip_outside_ci_and_fail_under_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"name": "broken", "private": true}')
    (tmp_path / "package-lock.json").write_text("not a lockfile")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"npm ci in .* failed|is not on PATH"):
        require_node_packages(tmp_path)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must install every test dependency"):
        require_node_packages(tmp_path)
