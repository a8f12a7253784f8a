"""``LlamaServerBackend``: the local path (:mod:`voxcall.llm.local`) with a llama.cpp server elsewhere doing the
inference: ``llama-server``, or voxcall's own launcher of the same prebuilt engine (``python -m
voxcall.llm.local.serve``, :mod:`voxcall.llm.local.serve`).

Why: the in-process backend runs every session in one process on the machine's cores; a server elsewhere decodes
many sessions at once (``--parallel`` slots, continuous batching) on its own cores and serves several voxcall
replicas.

What stays as in process: everything decided before and while the model runs, by the same engine
(:class:`~voxcall.llm.local.server_engine.ServerEngine`), with the vocabulary of the same GGUF file the server
loaded (read from the file's metadata, no weights), so the token ids it sends are the server's; it checks that
the two agree.
"""

from __future__ import annotations

from pathlib import Path

import httpx2

from voxcall.llm.base import LLMError
from voxcall.llm.local.backend import LocalBackend
from voxcall.llm.local.llamacpp import default_model_path, read_vocabulary
from voxcall.llm.local.plan import ReplyOptions
from voxcall.llm.local.server_engine import ServerEngine
from voxcall.llm.openai_client import DEFAULT_TIMEOUT


class LlamaServerBackend(LocalBackend):
    """The local path against ``llama-server`` at ``base_url``.

    ``model_path`` is the GGUF file the server was started with (None: :func:`~voxcall.llm.local.llamacpp.
    default_model_path`); only its vocabulary is read. ``timeout`` bounds a request's silence; ``options`` plan the
    replies. Raises ``LLMError`` (``"unavailable"``) when the server does not answer or serves a model with
    another vocabulary.
    """

    def __init__(self, base_url: str, model_path: str | Path | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                 api_key: str | None = None, options: ReplyOptions | None = None) -> None:
        root = base_url.rstrip("/").removesuffix("/v1")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        n_ctx, served = _server_facts(root, headers, timeout)
        path = Path(model_path) if model_path is not None else default_model_path()
        vocabulary = read_vocabulary(path)
        if served is not None and served != vocabulary.n_vocab:
            raise LLMError(f"llama-server serves a model with {served} tokens, {path.name} has "
                           f"{vocabulary.n_vocab}: start it with the same GGUF file", code="unavailable")
        client = httpx2.AsyncClient(base_url=root, headers=headers, timeout=httpx2.Timeout(timeout))
        super().__init__(ServerEngine(client, vocabulary, n_ctx=n_ctx), name=f"llama-server:{path.stem}",
                         model_path=path, options=options or ReplyOptions())


def _server_facts(root: str, headers: dict[str, str], timeout: float) -> tuple[int, int | None]:
    """A slot's context size, and the vocabulary size of the served model when the server says (at start-up)."""
    try:
        with httpx2.Client(base_url=root, headers=headers, timeout=timeout) as client:
            props = client.get("/props")
            props.raise_for_status()
            models = client.get("/v1/models")
    except httpx2.HTTPError as exc:
        raise LLMError(f"llama-server at {root} does not answer", code="unavailable") from exc
    n_ctx = int(props.json()["default_generation_settings"]["n_ctx"])
    try:
        served = int(models.json()["data"][0]["meta"]["n_vocab"])
    except (ValueError, KeyError, IndexError, TypeError):
        served = None
    return n_ctx, served
