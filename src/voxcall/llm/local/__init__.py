"""The local path: a GGUF model run by llama.cpp, in process or by ``llama-server``, calling tools as ``<code>``
blocks written under a grammar.

:class:`LlamaCppBackend` runs the model in this process; :class:`LlamaServerBackend` has llama.cpp's server run
it. Both are a :class:`LocalBackend`: one planner (the prompt, the call decision, the grammar, relayed results),
one reply driver (:mod:`voxcall.llm.local.driver`), and an engine that evaluates prompts and samples tokens.
"""

from __future__ import annotations

from voxcall.llm.local.backend import LocalBackend
from voxcall.llm.local.llama_server import LlamaServerBackend, find_llama_server
from voxcall.llm.local.llamacpp import LlamaCppBackend, default_model_path
from voxcall.llm.local.plan import ReplyOptions

__all__ = ["LlamaCppBackend", "LlamaServerBackend", "LocalBackend", "ReplyOptions", "default_model_path",
           "find_llama_server"]
