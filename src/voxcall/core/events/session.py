"""Events about the session itself."""

from __future__ import annotations

from dataclasses import dataclass

from voxcall.core.settings import SessionSettings


@dataclass(frozen=True, slots=True)
class SettingsApplied:
    """The session's settings changed (an update was applied, all of it): these are the new ones."""

    settings: SessionSettings
