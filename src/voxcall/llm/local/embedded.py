"""``EmbeddedServer``: llama.cpp's own server, prebuilt in the ``xllamacpp`` wheel, run inside this process.

Why a server in process: the ``xllamacpp`` wheel (MIT, a manylinux CPU build) installs in seconds with no
compiler, and holds llama.cpp's server whole: continuous batching over ``slots``, prompt caching (each slot keeps
its evaluated tokens; a prompt a slot had to drop is kept in a host-memory cache of ``cache_mib`` and restored when
a later prompt begins the same way), GBNF grammars, ``n_probs`` and ``logit_bias``. voxcall speaks to it exactly
as it speaks to a ``llama-server`` elsewhere (:class:`~voxcall.llm.local.server_engine.ServerEngine`), so one
engine serves both, and the scale-out server is the same code (:mod:`voxcall.llm.local.serve`).

Where it listens: by default on a Unix socket in a private folder of its own (mode 0700), which only this
process's user can reach; :mod:`voxcall.llm.local.serve` gives it a TCP address instead, with an API key when it
is not loopback.

Threads: ``decode_threads`` generate and ``threads`` evaluate prompts. llama.cpp's OpenMP threads spin while they
wait, and next to other busy threads (speech models) spinning threads starve each other, so they wait passively
unless ``OMP_WAIT_POLICY`` says otherwise (read when the library first loads). One thread decodes a small model
fastest: waking a second costs more than the work they share.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from voxcall.config import LocalModelSettings

log = logging.getLogger(__name__)

_LOCAL = LocalModelSettings()
"""The ``local:`` settings' defaults, which a server's options default to."""

SOCKET_NAME = "llama.sock"
_ONE_SHOT = httpx2.Limits(max_keepalive_connections=0)
HTTP_THREADS = 32
"""llama.cpp's HTTP worker threads: each open request holds one while it waits for a slot, so there are far more
than slots (a request beyond them would wait for a worker before it is even queued)."""


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """How llama.cpp serves a model: ``n_ctx`` tokens of context per slot, ``slots`` replies generated at once,
    ``threads`` evaluating prompts and ``decode_threads`` generating, prompts evaluated ``batch`` tokens at a time
    (a cancelled request stops after the batch in hand), ``cache_mib`` of host memory for prompts the slots
    dropped (0: none)."""

    n_ctx: int = _LOCAL.n_ctx
    slots: int = _LOCAL.slots
    threads: int = _LOCAL.threads
    decode_threads: int = 1
    batch: int = 256
    cache_mib: int = _LOCAL.state_cache_bytes // 2**20


class EmbeddedServerError(RuntimeError):
    """llama.cpp could not start with this model (the file, or the options)."""


class EmbeddedServer:
    """llama.cpp's server for the GGUF at ``model_path``, in this process, served with ``options``.

    ``host`` and ``port`` give it a TCP address (``api_key``: the key requests must carry); without them it listens
    on a private Unix socket (:attr:`socket`). Raises :class:`EmbeddedServerError` when the model cannot be loaded,
    ``ImportError`` when ``xllamacpp`` is not installed.
    """

    def __init__(self, model_path: Path, options: ServerOptions, *, host: str | None = None, port: int = 0,
                 api_key: str | None = None) -> None:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import xllamacpp  # type: ignore[import-untyped]

        self.model_path = model_path
        self.options = options
        self._folder: str | None = None
        self.socket: str | None = None
        """The Unix socket it listens on (None: a TCP address)."""
        if host is None:
            self._folder = tempfile.mkdtemp(prefix="voxcall-llama-")  # mode 0700: this user's only
            self.socket = os.path.join(self._folder, SOCKET_NAME)
        params = xllamacpp.CommonParams()
        params.model.path = str(model_path)
        params.n_ctx = options.n_ctx * options.slots
        params.n_parallel = options.slots
        params.n_batch = params.n_ubatch = options.batch
        params.cpuparams.n_threads = options.decode_threads
        params.cpuparams_batch.n_threads = options.threads
        params.cache_ram_mib = options.cache_mib
        params.n_threads_http = HTTP_THREADS
        params.hostnames = [self.socket or host or "127.0.0.1"]
        params.port = port
        params.api_keys = [api_key] if api_key else []
        params.warmup = False
        params.verbosity = -1 if log.getEffectiveLevel() > logging.DEBUG else 1
        params.endpoint_metrics = True
        try:
            self._server: Any = xllamacpp.Server(params)
        except RuntimeError as exc:
            self._remove_folder()
            raise EmbeddedServerError(f"llama.cpp could not load {model_path.name}") from exc
        self.address: str = self._server.listening_address
        """Where it listens, as llama.cpp reports it (``unix:///…`` or ``http://host:port``)."""

    @property
    def url(self) -> str:
        """The base URL requests go to (over the socket, the host part is a placeholder)."""
        return "http://llama.cpp" if self.socket else self.address

    def transport(self) -> httpx2.AsyncHTTPTransport:
        """A transport that reaches the server, over its socket when it has one, a connection per request: one
        costs tens of microseconds on a socket, and none is then kept that another event loop (a test's) or a
        connection the server closed could trip over."""
        return httpx2.AsyncHTTPTransport(uds=self.socket, limits=_ONE_SHOT)

    def sync_transport(self) -> httpx2.HTTPTransport:
        """The same, for blocking requests from a worker thread."""
        return httpx2.HTTPTransport(uds=self.socket, limits=_ONE_SHOT)

    def close(self) -> None:
        """Stop the server (its slots' work ends) and free the model (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            del server
        self._remove_folder()

    def _remove_folder(self) -> None:
        if self._folder is not None:
            with contextlib.suppress(OSError):
                shutil.rmtree(self._folder)
            self._folder = None
