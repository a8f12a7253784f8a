"""The local path: a GGUF model run by llama.cpp's server, in process or elsewhere, calling tools as ``<code>``
blocks written under a grammar.

:class:`LlamaCppBackend` runs the model in this process (the prebuilt ``xllamacpp`` engine); :class:`LlamaServerBackend`
has a llama.cpp server elsewhere run it. Both are a :class:`LocalBackend`: one planner (the prompt, the call
decision, the grammar, relayed results), one reply driver (:mod:`voxcall.llm.local.driver`), and one engine that
evaluates prompts and samples tokens (:mod:`voxcall.llm.local.server_engine`).
"""

from __future__ import annotations

from voxcall.llm.local.backend import LocalBackend
from voxcall.llm.local.llama_server import LlamaServerBackend
from voxcall.llm.local.llamacpp import LlamaCppBackend, default_model_path
from voxcall.llm.local.plan import ReplyOptions

__all__ = ["LlamaCppBackend", "LlamaServerBackend", "LocalBackend", "ReplyOptions", "default_model_path"]
