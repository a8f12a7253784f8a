"""Reading settings: flags over a YAML file over the environment over defaults, and saying what is wrong in terms
the user can act on (the setting and where it came from, never its value)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from voxcall.config.kinds import ConfigError

LLM_KEY_ENV = "VOXCALL_LLM_API_KEY"
"""Environment variable of the upstream LLM key (not ``VOXCALL_API_KEY``, too close to ``VOXCALL_API_KEYS``)."""


def sections(model: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """The fields of ``model`` that are sections, with their models."""
    return {name: field.annotation for name, field in model.model_fields.items()
            if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)}


def given(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``overrides`` without the values that were not given (None), in sections too; emptied sections go."""
    kept: dict[str, Any] = {}
    for name, value in overrides.items():
        if isinstance(value, Mapping):
            value = given(value) or None
        if value is not None:
            kept[name] = value
    return kept


def merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` on top, section by section (a flag changes one field of a YAML section, not all)."""
    out = dict(base)
    for name, value in over.items():
        below = out.get(name)
        out[name] = merged(below, value) if isinstance(below, Mapping) and isinstance(value, Mapping) else value
    return out


def read_yaml(path: Path, model: type[BaseModel]) -> dict[str, Any]:
    """The settings in the YAML file ``path``. Raises :class:`ConfigError` when it is missing, malformed or holds
    an unknown top-level key (a key within a section is checked by that section's model)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {path}: not found") from None
    except OSError as exc:
        raise ConfigError(f"config file {path}: cannot read it ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path}: not valid YAML ({_yaml_problem(exc)})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: expected a mapping of settings, got {type(data).__name__}")
    known = set(model.model_fields)
    unknown = sorted(str(key) for key in data if key not in known)
    if unknown:
        hints = "".join(f"; {name} belongs in the {section}: section" for name in unknown
                        if (section := _section_holding(model, name)) is not None)
        raise ConfigError(f"config file {path}: unknown setting(s) {', '.join(unknown)}{hints}; "
                          f"known: {', '.join(sorted(known))}")
    return data


def check_env_names(environ: Mapping[str, str], model: type[BaseModel]) -> None:
    """Refuse a ``VOXCALL_*`` variable named after a section's field without its section
    (``VOXCALL_LLM_TIMEOUT`` for ``VOXCALL_SESSION__LLM_TIMEOUT``), which the environment source would ignore."""
    prefix = "VOXCALL_"
    misplaced = sorted(f"{name} (use {prefix}{section.upper()}__{name[len(prefix):].upper()})"
                       for name in environ if name.upper().startswith(prefix)
                       if (section := _section_holding(model, name[len(prefix):].lower())) is not None)
    if misplaced:
        raise ConfigError(f"environment variable(s) outside their section: {', '.join(misplaced)}")


def _section_holding(model: type[BaseModel], name: str) -> str | None:
    """The section that has a field ``name`` (for a flat key written at the top level), if any; None for a name the
    top level has too (``model`` is the talker's, ``thinker.model`` the thinker's)."""
    if name in model.model_fields:
        return None
    return next((section for section, part in sections(model).items() if name in part.model_fields), None)


def describe(exc: ValidationError, config_path: Path | None) -> str:
    """One line per invalid value, naming the setting (never echoing the value: it may be a secret)."""
    where = f" (from flags, {config_path} or the environment)" if config_path else " (from flags or the environment)"
    problems = "; ".join(f"{_setting_name(error['loc'])}: {error['msg']}" for error in exc.errors())
    return f"invalid settings{where}: {problems}"


def _setting_name(loc: tuple[int | str, ...]) -> str:
    """The user-facing name of an error location (``api_key`` rather than its env alias)."""
    name = ".".join(str(part) for part in loc) or "settings"
    return "api_key" if name == LLM_KEY_ENV else name


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """Where and what the YAML error is, on one line (``line 2, column 5: expected ',' or ']', but got ':'``)."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None and exc.problem:
        mark = exc.problem_mark
        return f"line {mark.line + 1}, column {mark.column + 1}: {exc.problem}"
    return " ".join(str(exc).split())
