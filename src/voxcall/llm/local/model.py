"""``LocalModel``: a GGUF model loaded by llama.cpp, and the token-level operations a local backend needs.

Everything here blocks and none of it is thread-safe: one thread at a time drives a model (see
:mod:`voxcall.llm.local.llamacpp`). The loop is our own rather than ``Llama.generate`` so that each step can be
decided in full: which tokens a grammar allows, what the first token says about opening a call.

- :meth:`LocalModel.evaluate` brings the context to a prompt, keeping the longest prefix already evaluated:
  a conversation's system prompt, tools and earlier turns are evaluated once, not every turn;
  :meth:`LocalModel.preload` does the same ahead of a prompt (a warm), without the logits a pick needs.
- Both keep saved states of the context (:class:`~voxcall.llm.local.state_store.StateStore`, bounded by
  ``state_cache_bytes``): sessions sharing the one context each have their own system prompt and tools, and would
  otherwise evict each other's prefix every turn. Before the context drops more than :data:`STATE_MARGIN` of the
  tokens it holds, its state is saved (llama.cpp's per-sequence state of sequence 0: the KV cache alone, about
  23 kB a token for SmolLM2-135M, not ``Llama.save_state``'s copy of the whole logits array); when a saved state
  shares a longer prefix with the new prompt than the context does, by more than that margin, it is restored
  (about a millisecond) and only the rest is evaluated.

The invariant every operation keeps: the context holds exactly the tokens ``input_ids[:n_tokens]`` of the
``llama_cpp.Llama`` (positions past ``n_tokens`` may still hold older tokens, which ``Llama.eval`` drops before
it evaluates anything), so :meth:`LocalModel._shared` can trust them. A restored state is the very KV cache the
saved context had, so the logits that follow are those a fresh evaluation of its tokens gives (tested).
- :meth:`LocalModel.message_tokens` says how many tokens a message takes in a prompt, remembering the answer: a
  long conversation's messages are counted once, not every turn, when a request is fitted to the context
  (:mod:`voxcall.llm.local.context_fit`).
- :meth:`LocalModel.pick` chooses the next token among the ``TOP_K`` likeliest, filtered by a
  :class:`GrammarState` (llama.cpp's grammar engine) when one is given; only when none of those is allowed is
  the whole vocabulary checked. Applying a grammar to the whole vocabulary at every step cost about 20 ms per
  token on two cores, more than evaluating the token; checking 40 candidates costs about 1 ms. Greedy picks are
  the same either way: the best allowed token is in the top ``TOP_K`` whenever any of those is allowed.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from voxcall.llm.base import Message
from voxcall.llm.local.chat_template import ChatTemplate
from voxcall.llm.local.state_store import SavedState, StateStore, common_prefix

TOP_K = 40  # candidates considered per step (llama.cpp's default top-k)
PROMPT_CHUNK = 64  # prompt tokens evaluated between two looks at the cancel flag
PRELOAD_CHUNK = 256  # the same for a preload: bigger batches evaluate faster (on 2 cores ~250 tokens/s against
# ~150 at 64), and a stream that preempts a preload mostly needs the very prefix it is evaluating

STATE_MARGIN = 64  # tokens the context may drop without saving its state, or a saved state must add to be restored:
# below that, evaluating them again (~0.25 s on 2 cores) is not worth a save's copy and the store's room

COUNTED_MESSAGES = 4096  # messages whose token count is remembered (the least recently used are forgotten)
DEFAULT_WRAPPING = 8  # tokens a message's role and delimiters are taken to add when the template cannot say
_WRAPPING_CONTEXTS: dict[str, list[Message]] = {
    "user": [Message("user", "x"), Message("assistant", "x")],
    "assistant": [Message("user", "x")],
    "system": [Message("user", "x")],
}
"""For each role, a conversation a message of that role may follow, even under a template that wants users and
assistants to alternate: the message's wrapping is measured as what it adds to this conversation."""

_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])  # llama_token_data


def _bytes_pointer(data: npt.NDArray[np.uint8]) -> Any:
    """``data``'s buffer as the ``uint8_t *`` llama.cpp's state functions take."""
    return data.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))


class GrammarError(ValueError):
    """llama.cpp could not parse a grammar."""


class LocalModel:
    """A loaded GGUF model: tokenizer, chat template, context and sampling.

    ``n_threads`` evaluate prompts, ``decode_threads`` generated tokens. llama.cpp's OpenMP threads spin while
    they wait, and next to other busy threads (speech models, another model) spinning threads starve each other:
    a 290-token prompt took 45 s instead of 3 s on a busy 2-core machine. So they wait passively (unless
    ``OMP_WAIT_POLICY`` says otherwise; it is read when llama_cpp first loads). Waking threads costs about 17 ms
    per token for SmolLM2-135M, more than the work they share, hence one thread to decode a small model
    (14 ms per token, against 27 ms with two, or 10 ms with two spinning on an idle machine).

    ``state_cache_bytes`` bounds the saved states of the context (see the module's docstring; 0: none are
    saved). Raises ``OSError`` or ``ValueError`` when the file cannot be loaded. ``llama_options`` are passed on
    to ``llama_cpp.Llama``.
    """

    def __init__(self, path: Path, *, n_ctx: int, n_threads: int, decode_threads: int, seed: int | None = None,
                 state_cache_bytes: int, **llama_options: Any) -> None:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import llama_cpp

        self._lib = llama_cpp
        self._llm = llama_cpp.Llama(str(path), n_ctx=n_ctx, n_threads=decode_threads, n_threads_batch=n_threads,
                                    verbose=False, **llama_options)
        vocab = llama_cpp.llama_model_get_vocab(self._llm.model)
        if vocab is None:
            raise ValueError(f"the model {path.name} has no vocabulary")
        self._vocab = vocab
        self.n_ctx = self._llm.n_ctx()
        self.n_vocab = self._llm.n_vocab()
        bos, eos = self._llm.token_bos(), self._llm.token_eos()
        self._bos_text = self._special_text(bos)
        self._add_bos = self._llm.metadata.get("tokenizer.ggml.add_bos_token", "false") == "true"
        self.template = ChatTemplate(self._llm.metadata.get("tokenizer.chat_template"), bos_token=self._bos_text,
                                     eos_token=self._special_text(eos))
        self._rng = np.random.default_rng(seed)
        self._texts: list[str] | None = None  # each token's text, read once when a mask needs it
        self._wrappings: dict[str, int] = {}  # per role: the tokens the template adds around a message's text
        self._counted = functools.lru_cache(maxsize=COUNTED_MESSAGES)(self._count)
        self.states = StateStore(state_cache_bytes) if state_cache_bytes > 0 else None
        """The saved states of the context (None: none are kept)."""

    # -- text <-> tokens -------------------------------------------------------------------------------------

    def tokenize(self, text: str, *, prompt_start: bool = False) -> list[int]:
        """Tokens of ``text``, special tokens (``<|im_start|>``) included; ``prompt_start`` adds the BOS token
        where the model wants one and the text (a rendered template) does not begin with it already."""
        if not text:
            return []
        bos = prompt_start and self._add_bos and not (self._bos_text and text.startswith(self._bos_text))
        return self._llm.tokenize(text.encode(), add_bos=bos, special=True)

    def message_tokens(self, message: Message) -> int:
        """How many tokens ``message`` takes in a rendered prompt: its text's tokens plus the tokens the chat
        template wraps it in (its role, the turn's delimiters: measured once per role). Remembered per message,
        the least recently asked forgotten past :data:`COUNTED_MESSAGES`."""
        return self._counted(message)

    def _count(self, message: Message) -> int:
        return len(self.tokenize(message.text)) + self._wrapping(message)

    def _wrapping(self, message: Message) -> int:
        """The tokens the template adds around the text of a message of ``message``'s role (measured with a
        one-token text, once per role); :data:`DEFAULT_WRAPPING` when the template will not render the
        measuring conversation."""
        role = message.role
        if role not in self._wrappings:
            before = _WRAPPING_CONTEXTS[role]
            probe = Message(role, "x")
            try:
                alone = self.template.render(before, add_generation_prompt=False)
                added = self.template.render([*before, probe], add_generation_prompt=False)
            except ValueError:
                self._wrappings[role] = DEFAULT_WRAPPING
            else:
                wrapping = len(self.tokenize(added)) - len(self.tokenize(alone)) - len(self.tokenize(probe.text))
                self._wrappings[role] = max(0, wrapping)
        return self._wrappings[role]

    def piece(self, token: int, *, special: bool = False) -> bytes:
        """The bytes a generated token stands for (special tokens give none unless ``special``)."""
        return self._llm.detokenize([token], special=special)

    def special_token(self, text: str) -> int | None:
        """The one token ``text`` is (a special token such as ``<|python_tag|>``), or None when it takes several."""
        tokens = self._llm.tokenize(text.encode(), add_bos=False, special=True) if text else []
        return tokens[0] if len(tokens) == 1 else None

    def is_end(self, token: int) -> bool:
        """End of turn, or a control token (a new turn's header) that has no business in a reply."""
        return bool(self._lib.llama_vocab_is_eog(self._vocab, token)
                    or self._lib.llama_vocab_is_control(self._vocab, token))

    def token_mask(self, accepts: Callable[[str], bool]) -> npt.NDArray[np.bool_]:
        """Which tokens' text (bytes decoded leniently) ``accepts(text)`` is true for."""
        if self._texts is None:
            self._texts = [self.piece(t).decode(errors="replace") for t in range(self.n_vocab)]
        return np.array([accepts(text) for text in self._texts], dtype=bool)

    def _special_text(self, token: int) -> str:
        return self._llm.detokenize([token], special=True).decode(errors="replace") if token >= 0 else ""

    # -- the context -----------------------------------------------------------------------------------------

    def evaluate(self, tokens: list[int], cancel: threading.Event) -> int:
        """Bring the context to ``tokens``: keep the longest prefix already evaluated (or restore a saved state
        that shares a longer one) and evaluate the rest in chunks (at least the last token, whose logits
        :meth:`pick` reads). Returns how many tokens were kept (restored ones included). Stops early when
        ``cancel`` is set (the context is then incomplete: do not pick)."""
        kept = self._reuse(tokens[:-1])
        self._evaluate_from(kept, tokens, cancel, PROMPT_CHUNK)
        return kept

    def preload(self, tokens: list[int], cancel: threading.Event) -> int:
        """Make the context begin with ``tokens``, ahead of a prompt that will: nothing happens when it does
        already (what follows them is kept too), else what follows the longest shared prefix (the context's, or
        a saved state's, restored) is evaluated, in chunks, stopping early when ``cancel`` is set. Returns how
        many tokens were already there. Do not pick afterwards: the prompt itself still goes through
        :meth:`evaluate`, which then evaluates only what is new."""
        kept = self._reuse(tokens)
        if kept < len(tokens):
            self._evaluate_from(kept, tokens, cancel, PRELOAD_CHUNK)
        return kept

    def _shared(self, tokens: list[int]) -> int:
        """How many of ``tokens`` the context already holds, from the start."""
        return common_prefix(self._llm.input_ids[:self._llm.n_tokens], tokens)

    def _reuse(self, tokens: list[int]) -> int:
        """How many of ``tokens`` the context can keep, after saving its state when it is about to drop more
        than :data:`STATE_MARGIN` tokens (and no saved state holds them already), and restoring a saved state
        that shares more than that margin beyond what the context holds."""
        kept = self._shared(tokens)
        if self.states is None:
            return kept
        best, shared = self.states.best(tokens)
        held = self._llm.input_ids[:self._llm.n_tokens].tolist()
        if len(held) - kept > STATE_MARGIN and not self.states.covers(held):
            self._save(held)
        if best is not None and shared > kept + STATE_MARGIN:
            return shared if self._restore(best) else 0
        return kept

    def _save(self, held: list[int]) -> None:
        """Save the state of the context, which holds ``held``."""
        assert self.states is not None
        ctx = self._llm.ctx
        self._lib.llama_memory_seq_rm(self._lib.llama_get_memory(ctx), 0, len(held), -1)  # what eval would drop
        data = np.empty(self._lib.llama_state_seq_get_size(ctx, 0), dtype=np.uint8)
        written = self._lib.llama_state_seq_get_data(ctx, _bytes_pointer(data), data.nbytes, 0)
        if written == data.nbytes:
            self.states.add(SavedState(tuple(held), data))

    def _restore(self, state: SavedState) -> bool:
        """Make the context hold ``state``'s tokens; False (the state forgotten, the context emptied) when
        llama.cpp refuses the state."""
        assert self.states is not None
        ctx, llm = self._llm.ctx, self._llm
        self._lib.llama_memory_seq_rm(self._lib.llama_get_memory(ctx), 0, -1, -1)
        if self._lib.llama_state_seq_set_data(ctx, _bytes_pointer(state.data), state.nbytes, 0) != state.nbytes:
            self.states.discard(state)
            llm.n_tokens = 0
            return False
        llm.input_ids[:len(state.tokens)] = state.tokens
        llm.n_tokens = len(state.tokens)
        self.states.used(state)
        return True

    def _evaluate_from(self, kept: int, tokens: list[int], cancel: threading.Event, chunk: int) -> None:
        """Drop what the context holds past ``kept`` tokens, then evaluate ``tokens[kept:]`` chunk by chunk
        until done or ``cancel`` is set (whole chunks stay: a later prompt reuses them). Cancelled before it
        begins, it leaves the context as it is."""
        if cancel.is_set():
            return
        llm = self._llm
        llm.n_tokens = kept  # the next eval drops the cached tokens past the prefix
        for start in range(kept, len(tokens), chunk):
            if cancel.is_set():
                break
            llm.eval(tokens[start:start + chunk])

    def advance(self, token: int) -> None:
        """Evaluate a picked token, so that the next logits follow it."""
        self._llm.eval([token])

    @property
    def n_tokens(self) -> int:
        """How many tokens the context holds."""
        return int(self._llm.n_tokens)

    # -- choosing tokens -------------------------------------------------------------------------------------

    def probability(self, mask: npt.NDArray[np.bool_]) -> float:
        """The probability the model gives, for the next token, to the tokens in ``mask`` together."""
        logits = self._logits().astype(np.float64)
        probs = np.exp(logits - logits.max())
        return float(probs[mask].sum() / probs.sum())

    def pick(self, temperature: float, grammar: GrammarState | None = None,
             exclude: npt.NDArray[np.bool_] | None = None) -> int:
        """The next token: the likeliest (``temperature`` 0) or one sampled from the ``TOP_K`` likeliest, among
        those ``grammar`` allows and ``exclude`` does not name. The grammar, if any, then accepts the token."""
        logits = self._logits()
        if exclude is not None:
            logits = np.where(exclude, -np.inf, logits).astype(np.float32)
        top = np.argpartition(-logits, TOP_K)[:TOP_K]
        top = top[np.argsort(-logits[top], kind="stable")]
        allowed = grammar.allowed(top, logits) if grammar is not None else np.ones(len(top), dtype=bool)
        if not allowed.any() and grammar is not None:  # none of the likeliest fits: look at every token
            everything = np.argsort(-logits, kind="stable")
            top = everything[grammar.allowed(everything, logits)][:TOP_K]
            allowed = np.ones(len(top), dtype=bool)
        candidates = top[allowed & np.isfinite(logits[top])]
        if len(candidates) == 0:
            raise RuntimeError("no token is allowed here")
        if temperature <= 0:
            token = int(candidates[0])
        else:
            weights = np.exp((logits[candidates] - logits[candidates[0]]).astype(np.float64) / temperature)
            token = int(self._rng.choice(candidates, p=weights / weights.sum()))
        if grammar is not None:
            grammar.accept(token)
        return token

    def _logits(self) -> npt.NDArray[np.float32]:
        """The logits after the last evaluated token (a view: valid until the next evaluation)."""
        pointer = self._lib.llama_get_logits_ith(self._llm.ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,))

    # -- grammars --------------------------------------------------------------------------------------------

    def grammar(self, text: str) -> GrammarState:
        """A fresh state of the GBNF grammar ``text`` (rule ``root``); raises :class:`GrammarError` when llama.cpp
        cannot parse it (an unchecked grammar would crash the sampler instead)."""
        return GrammarState(self._lib, self._vocab, text)

    def close(self) -> None:
        """Free the model and its context."""
        self._llm.close()


class GrammarState:
    """Where generation stands in a grammar: which tokens may come next, and the tokens taken so far.

    Wraps llama.cpp's grammar sampler, used directly on candidate lists rather than inside a sampler chain;
    :meth:`close` frees it.
    """

    def __init__(self, lib: Any, vocab: Any, text: str) -> None:
        self._lib = lib
        self._sampler = lib.llama_sampler_init_grammar(vocab, text.encode(), b"root")
        if not self._sampler:
            raise GrammarError("llama.cpp could not parse the grammar")

    def allowed(self, tokens: npt.NDArray[np.intp], logits: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
        """For each of ``tokens``, whether the grammar allows it next."""
        data = np.zeros(len(tokens), dtype=_TOKEN_DATA)
        data["id"] = tokens
        data["logit"] = np.where(np.isfinite(logits[tokens]), 0.0, -np.inf)
        pointer = data.ctypes.data_as(ctypes.POINTER(self._lib.llama_token_data))
        candidates = self._lib.llama_token_data_array(pointer, len(tokens), -1, False)
        self._lib.llama_sampler_apply(self._sampler, ctypes.byref(candidates))
        allowed: npt.NDArray[np.bool_] = np.isfinite(data["logit"])
        return allowed

    def accept(self, token: int) -> None:
        """Move past ``token``, which must be allowed."""
        self._lib.llama_sampler_accept(self._sampler, token)

    def close(self) -> None:
        """Free the sampler (idempotent)."""
        if self._sampler:
            self._lib.llama_sampler_free(self._sampler)
            self._sampler = None
