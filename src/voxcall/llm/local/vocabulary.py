"""``Vocabulary``: a GGUF model's tokens, tokenizer and chat template, read from the file's metadata alone.

The local path decides every step of a reply itself (:mod:`voxcall.llm.local.driver`): it renders the prompt with
the model's own chat template, sends token ids, and reads the engine's answers as token ids. For that it needs
the vocabulary on this side of the engine, whichever engine runs the model (llama.cpp in this process, or a
llama.cpp server elsewhere), without loading the weights: :func:`~voxcall.llm.local.gguf.read_metadata` gives the
tokens, their types, the merges and the template, and a byte-level BPE tokenizer (Hugging Face ``tokenizers``)
is built from them with the pre-tokenizer llama.cpp uses for the model's ``tokenizer.ggml.pre``
(:data:`PRE_TOKENIZERS`), so that the ids are the ones llama.cpp itself would give
(``tests/llm/local/test_vocabulary.py`` checks this against the engine's own tokenizer).

Only byte-level BPE vocabularies (``tokenizer.ggml.model`` ``gpt2``: SmolLM, Qwen, Llama 3 and most current
models) are read; another kind is refused with :class:`VocabularyError`.

A token's *piece* is the bytes it stands for: a normal token's text is GPT-2's byte-to-character mapping of its
bytes, a control token (``<|im_end|>``) stands for nothing unless asked (``special``), a user-defined one for its
text.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

from voxcall.llm.base import Message
from voxcall.llm.local.chat_template import ChatTemplate
from voxcall.llm.local.gguf import read_metadata

_GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
_QWEN2 = (r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
          r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
_LLAMA3 = _QWEN2.replace(r"|\p{N}|", r"|\p{N}{1,3}|")

PRE_TOKENIZERS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("default", "gpt-2", "gpt2", "phi-2", "olmo", "mpt"), (_GPT2,)),
    **dict.fromkeys(("smollm", "starcoder", "refact", "codeshell", "command-r", "exaone"), (r"\p{N}", _GPT2)),
    **dict.fromkeys(("qwen2", "deepseek-r1-qwen", "stablelm2", "megrez"), (_QWEN2,)),
    **dict.fromkeys(("llama3", "llama-v3", "llama-bpe", "falcon3", "lfm2", "pixtral", "dbrx", "smaug-bpe"),
                    (_LLAMA3,)),
}
"""llama.cpp's pre-tokenizer for each ``tokenizer.ggml.pre`` voxcall reads: regular expressions applied in turn,
each splitting the pieces the one before left (``llama-vocab.cpp``)."""
IGNORE_MERGES = frozenset({"llama3", "llama-v3", "llama-bpe"})
"""Pre-tokenizer names under which llama.cpp takes a whole word that is a token as it is, before any merge."""

NORMAL, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 3, 4, 5, 6
"""llama.cpp's token types (``tokenizer.ggml.token_type``)."""
END_TEXTS = frozenset({"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>",
                       "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>", "</s>"})
"""Texts of tokens that llama.cpp takes for the end of a turn whatever their type, besides the file's own."""

COUNTED_MESSAGES = 4096  # messages whose token count is remembered (the least recently used are forgotten)
DEFAULT_WRAPPING = 8  # tokens a message's role and delimiters are taken to add when the template cannot say
_WRAPPING_CONTEXTS: dict[str, list[Message]] = {
    "user": [Message("user", "x"), Message("assistant", "x")],
    "assistant": [Message("user", "x")],
    "system": [Message("user", "x")],
}
"""For each role, a conversation a message of that role may follow, even under a template that wants users and
assistants to alternate: the message's wrapping is measured as what it adds to this conversation."""


class VocabularyError(ValueError):
    """The file's vocabulary is of a kind voxcall cannot read."""


@functools.cache
def _byte_decoder() -> dict[str, int]:
    """GPT-2's mapping from the characters of byte-level token texts back to bytes."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = {byte: byte for byte in printable}
    extra = 0
    for byte in range(256):
        if byte not in chars:
            chars[byte] = 256 + extra
            extra += 1
    return {chr(char): byte for byte, char in chars.items()}


class Vocabulary:
    """The vocabulary of the GGUF file at ``path`` (see the module's docstring).

    Raises :class:`VocabularyError` for a vocabulary that is not byte-level BPE or whose pre-tokenizer voxcall
    does not know, and :class:`~voxcall.llm.local.gguf.GGUFError` or ``OSError`` for a file that cannot be read.
    """

    def __init__(self, path: Path) -> None:
        meta = read_metadata(path)
        kind, pre = meta.get("tokenizer.ggml.model"), str(meta.get("tokenizer.ggml.pre", "default"))
        if kind != "gpt2":
            raise VocabularyError(f"{path.name} has a {kind!r} tokenizer; voxcall's local path reads byte-level BPE "
                                  "(gpt2) vocabularies only: serve this model with an OpenAI-compatible server")
        if pre not in PRE_TOKENIZERS:
            raise VocabularyError(f"{path.name} has the pre-tokenizer {pre!r}, which voxcall does not know "
                                  f"(known: {', '.join(sorted(PRE_TOKENIZERS))})")
        self.name = path.name
        self.texts: list[str] = list(meta["tokenizer.ggml.tokens"])
        """Each token's text as the file stores it (byte-level characters for normal tokens)."""
        self.n_vocab = len(self.texts)
        self.types = np.asarray(meta.get("tokenizer.ggml.token_type", np.full(self.n_vocab, NORMAL)), dtype=np.int32)
        self.context_length = int(meta.get(f"{meta.get('general.architecture')}.context_length", 0)) or None
        """The context the model was trained for (None when the file does not say)."""
        self._tokenizer = _bpe(self.texts, list(meta.get("tokenizer.ggml.merges", [])), self.types, pre)
        self.bos = int(meta.get("tokenizer.ggml.bos_token_id", -1))
        self.eos = int(meta.get("tokenizer.ggml.eos_token_id", -1))
        self._ends = {int(meta[key]) for key in ("tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                                                 "tokenizer.ggml.eom_token_id") if key in meta}
        self._ends |= {token for token, text in enumerate(self.texts) if text in END_TEXTS}
        self._bos_text = self.texts[self.bos] if 0 <= self.bos < self.n_vocab else ""
        self._add_bos = bool(meta.get("tokenizer.ggml.add_bos_token", False))
        eos_text = self.texts[self.eos] if 0 <= self.eos < self.n_vocab else ""
        self.template = ChatTemplate(meta.get("tokenizer.chat_template"), bos_token=self._bos_text,
                                     eos_token=eos_text)
        self._specials = {text: token for token, text in enumerate(self.texts)
                          if self.types[token] in (CONTROL, USER_DEFINED)}
        self._pieces: list[bytes] | None = None  # each token's bytes, built once when a mask needs them
        self._wrappings: dict[str, int] = {}  # per role: the tokens the template adds around a message's text
        self._counted = functools.lru_cache(maxsize=COUNTED_MESSAGES)(self._count)

    # -- text <-> tokens -------------------------------------------------------------------------------------

    def tokenize(self, text: str, *, prompt_start: bool = False) -> list[int]:
        """Tokens of ``text``, special tokens (``<|im_start|>``) included; ``prompt_start`` adds the BOS token
        where the model wants one and the text (a rendered template) does not begin with it already."""
        if not text:
            return []
        # encode_batch, not encode: the batch call lets go of the GIL while it works (a 900,000-character prompt
        # takes half a second), so that a prompt tokenized on a planning thread does not stop the event loop
        tokens: list[int] = self._tokenizer.encode_batch([text], add_special_tokens=False)[0].ids
        if prompt_start and self._add_bos and self.bos >= 0 and not (self._bos_text
                                                                      and text.startswith(self._bos_text)):
            tokens.insert(0, self.bos)
        return tokens

    def piece(self, token: int, *, special: bool = False) -> bytes:
        """The bytes ``token`` stands for (a control token gives none unless ``special``)."""
        kind = int(self.types[token])
        text = self.texts[token]
        if kind == CONTROL:
            return text.encode() if special else b""
        if kind == UNUSED:
            return b""
        if kind == USER_DEFINED:
            return text.encode()
        decoder = _byte_decoder()
        return bytes(decoder[char] for char in text if char in decoder)

    def special_token(self, text: str) -> int | None:
        """The one token ``text`` is (a special token such as ``<|python_tag|>``), or None when it takes several."""
        if text in self._specials:
            return self._specials[text]
        tokens = self.tokenize(text)
        return tokens[0] if len(tokens) == 1 else None

    def is_end(self, token: int) -> bool:
        """End of turn, or a control token (a new turn's header) that has no business in a reply."""
        return token in self._ends or int(self.types[token]) == CONTROL

    def token_mask(self, accepts: Callable[[str], bool]) -> npt.NDArray[np.bool_]:
        """Which tokens' text (bytes decoded leniently; control tokens: none) ``accepts(text)`` is true for."""
        if self._pieces is None:
            self._pieces = [self.piece(token) for token in range(self.n_vocab)]
        return np.array([accepts(piece.decode(errors="replace")) for piece in self._pieces], dtype=bool)

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


def _bpe(texts: list[str], merges: list[str], types: npt.NDArray[np.int32], pre: str) -> Tokenizer:
    """A byte-level BPE tokenizer over ``texts`` and ``merges`` ("a b" each), splitting first on the control and
    user-defined tokens (as llama.cpp does when it parses special tokens), then as :data:`PRE_TOKENIZERS` says for
    ``pre``."""
    vocab = {text: token for token, text in enumerate(texts)}
    pairs: list[tuple[str, str]] = []
    for merge in merges:
        left, _, right = merge.partition(" ")
        pairs.append((left, right))
    tokenizer = Tokenizer(models.BPE(vocab, pairs, ignore_merges=pre in IGNORE_MERGES))
    steps: list[Any] = [pre_tokenizers.Split(Regex(pattern), behavior="isolated") for pattern in PRE_TOKENIZERS[pre]]
    steps.append(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(steps)
    tokenizer.decoder = decoders.ByteLevel()
    special = [AddedToken(texts[token], special=True, normalized=False)
               for token in np.flatnonzero((types == CONTROL) | (types == USER_DEFINED))]
    tokenizer.add_special_tokens(special)
    return tokenizer
