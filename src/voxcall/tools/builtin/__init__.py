"""Built-in tools, each registered on a :class:`~voxcall.tools.registry.ToolRegistry` by name.

``BUILTINS`` maps a built-in's name to the function that registers it, given the :class:`BuiltinOptions` some
built-ins need; :func:`register_builtins` registers a chosen set (for example the names listed in the
configuration):

- ``calculator``: exact arithmetic;
- ``clock``: the date and time now, here or in an IANA time zone (``current_time``);
- ``music``: play songs from a music folder on the host's audio output (``music_list``, ``music_play`` …);
- ``voice_volume``: the assistant's own voice volume (``voice_set_volume``, ``voice_volume_up``/``_down``).

The music tools (and PyAV with them) are imported only when ``music`` is registered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from voxcall.tools.builtin import calculator, clock, volume
from voxcall.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from voxcall.audio.output import AudioOutput

__all__ = ["BUILTINS", "BuiltinOptions", "register_builtins"]


@dataclass(frozen=True)
class BuiltinOptions:
    """What some built-ins need: ``music`` plays from ``music_dir`` on ``output`` (a default one when ``None``)."""

    music_dir: Path | None = None
    output: AudioOutput | None = None


def _register_calculator(registry: ToolRegistry, options: BuiltinOptions) -> None:
    calculator.register(registry)


def _register_clock(registry: ToolRegistry, options: BuiltinOptions) -> None:
    clock.register(registry)


def _register_voice_volume(registry: ToolRegistry, options: BuiltinOptions) -> None:
    volume.register(registry)


def _register_music(registry: ToolRegistry, options: BuiltinOptions) -> None:
    from voxcall.audio.output import AudioOutput, default_sink
    from voxcall.tools.builtin.music import register_music

    if options.music_dir is None:
        raise ValueError("the music built-in needs a music folder (tools.music_dir)")
    register_music(registry, options.music_dir, options.output or AudioOutput(default_sink()))


BUILTINS: Mapping[str, Callable[[ToolRegistry, BuiltinOptions], None]] = MappingProxyType({
    "calculator": _register_calculator,
    "clock": _register_clock,
    "music": _register_music,
    "voice_volume": _register_voice_volume,
})


def register_builtins(registry: ToolRegistry, names: Iterable[str], *, music_dir: str | Path | None = None,
                      output: AudioOutput | None = None) -> None:
    """Register the built-ins called ``names`` on ``registry``.

    ``music`` needs ``music_dir``; it plays on ``output``, which should be the one the server also tells about
    the assistant's speech (so that speech pauses the music), else on a new ``AudioOutput(default_sink())``.
    Raises ``ValueError`` listing the known built-ins when a name is unknown (nothing is registered then), and
    when ``music`` lacks a usable ``music_dir``.
    """
    names = list(names)
    unknown = [name for name in names if name not in BUILTINS]
    if unknown:
        raise ValueError(f"unknown built-in tool{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)} "
                         f"(known: {', '.join(BUILTINS)})")
    options = BuiltinOptions(Path(music_dir) if music_dir is not None else None, output)
    for name in names:
        BUILTINS[name](registry, options)
