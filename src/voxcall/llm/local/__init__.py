"""The local path: a GGUF model run by llama.cpp, in process or by ``llama-server``, calling tools as ``<code>``
blocks written under a grammar.

:class:`LlamaCppBackend` runs the model in this process; :class:`LlamaServerBackend` has llama.cpp's server run
it. Both plan a reply the same way (the prompt, the call decision, the grammar, relayed results) and differ only
in what evaluates the prompt and samples the tokens.
"""

from __future__ import annotations

from voxcall.llm.local.llama_server import LlamaServerBackend, find_llama_server
from voxcall.llm.local.llamacpp import LlamaCppBackend, default_model_path

__all__ = ["LlamaCppBackend", "LlamaServerBackend", "default_model_path", "find_llama_server"]
