"""``LlamaCppBackend``: a GGUF model run in this process by llama.cpp, on the local path (:mod:`voxcall.llm.local`).

The model is loaded once, by llama.cpp's own server compiled into the ``xllamacpp`` wheel
(:class:`~voxcall.llm.local.embedded.EmbeddedServer`, listening on a private Unix socket), and shared by every
session: ``slots`` replies are generated at once (continuous batching), each slot keeps the prompt it evaluated,
and a prompt a slot dropped waits in a host-memory cache, so sessions with different system prompts and tools do
not evaluate their prefix again each turn. The engine (:class:`~voxcall.llm.local.server_engine.ServerEngine`) is
the one that speaks to a ``llama-server`` elsewhere; here warms go in chunks of :data:`WARM_CHUNK_S` and a reply
that starts stops them (two cores are all the machine has); the server keeps what they evaluated.
"""

from __future__ import annotations

from pathlib import Path

import httpx2

from voxcall.llm import catalog
from voxcall.llm.base import LLMError
from voxcall.llm.local.backend import LocalBackend
from voxcall.llm.local.embedded import EmbeddedServer, EmbeddedServerError, ServerOptions
from voxcall.llm.local.gguf import GGUFError
from voxcall.llm.local.plan import LOCAL_DEFAULTS, ReplyOptions
from voxcall.llm.local.server_engine import ServerEngine
from voxcall.llm.local.vocabulary import Vocabulary, VocabularyError

WARM_CHUNK_S = 1.0
"""About how long each chunk of a warm takes: how long another session's reply that starts may wait for the warm to
give way (the session's own reply loses nothing: the chunk is the start of its prompt). Each chunk is a request,
and a small one evaluates more slowly: SmolLM2 on two cores evaluated 900 tokens at 241-248 tok/s whole, in chunks
of 200 or 400 tokens at 242-250, of 100 (0.5 s chunks) at 211-216, of 50 at 163-165; 0.5 s chunks gave a fresh
session's first audio 1.45/2.11 s median in ``bench_voice.py --models smollm2-135m``, 1 s chunks 1.17/1.56 s."""


def default_model_path() -> Path:
    """The GGUF of the catalog's default model (:data:`voxcall.llm.catalog.DEFAULT_MODEL`).

    Raises :class:`~voxcall.llm.catalog.ModelError` (an ``LLMError``, code ``"unavailable"``) when it is not
    installed; the message says how to install it.
    """
    return catalog.resolve(None)


def read_vocabulary(path: Path) -> Vocabulary:
    """The vocabulary of the GGUF at ``path``; ``LLMError`` (``"unavailable"``) with the reason when it cannot be
    read."""
    try:
        return Vocabulary(path)
    except (VocabularyError, GGUFError, OSError) as exc:
        raise LLMError(f"cannot read the vocabulary of {path.name}: {exc}", code="unavailable") from exc


class LlamaCppBackend(LocalBackend):
    """A local GGUF model run in this process.

    ``model_path`` defaults to :func:`default_model_path`. Each of ``slots`` replies has ``n_ctx`` tokens of
    context; ``n_threads`` evaluate prompts and ``decode_threads`` generate (one suits a small model: see
    :mod:`voxcall.llm.local.embedded`). ``state_cache_bytes`` bounds the prompts kept in memory once their slot
    dropped them (0: none). ``options`` plan the replies. Raises ``LLMError`` when the model cannot be loaded.
    """

    computes_here = True
    """The model runs on this machine's CPU, beside the speech models (:func:`~voxcall.llm.base.computes_here`)."""

    def __init__(self, model_path: str | Path | None = None, *, n_ctx: int = LOCAL_DEFAULTS.n_ctx,
                 n_threads: int = LOCAL_DEFAULTS.threads, decode_threads: int = 1, slots: int = LOCAL_DEFAULTS.slots,
                 state_cache_bytes: int = LOCAL_DEFAULTS.state_cache_bytes,
                 options: ReplyOptions | None = None) -> None:
        path = Path(model_path) if model_path is not None else default_model_path()
        vocabulary = read_vocabulary(path)
        served = ServerOptions(n_ctx=n_ctx, slots=slots, threads=n_threads, decode_threads=decode_threads,
                               cache_mib=state_cache_bytes // 2**20)
        try:
            server = EmbeddedServer(path, served)
        except EmbeddedServerError as exc:
            raise LLMError(f"cannot load the model {path.name}", code="unavailable") from exc
        except ImportError as exc:
            raise LLMError("the local model needs llama.cpp: pip install 'voxcall[local]'", code="unavailable") from exc
        self.server = server
        """llama.cpp's server, in this process."""
        client = httpx2.AsyncClient(base_url=server.url, transport=server.transport(), timeout=httpx2.Timeout(None))
        engine = ServerEngine(client, vocabulary, n_ctx=n_ctx, warm_chunk_s=WARM_CHUNK_S,
                              sole_cached_slot=slots == 1 and state_cache_bytes > 0, on_close=server.close)
        super().__init__(engine, name=f"llamacpp:{path.stem}", model_path=path, options=options or ReplyOptions())
