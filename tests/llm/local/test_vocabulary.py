"""The vocabulary read from the GGUF gives the token ids llama.cpp itself gives (checked against the server's
``/tokenize``, on the texts the local path sends: chat markup, tool calls, Chinese, numbers, odd spacing), turns ids
back into their bytes, and refuses vocabularies it cannot read with a message that says what to do."""

from __future__ import annotations

from pathlib import Path

import httpx2 as httpx
import pytest

from tests.llm.local.gguf_files import write_gguf
from tests.requirements import require_smollm2
from voxcall.llm.local.vocabulary import Vocabulary, VocabularyError

TEXTS = [
    "Hello, world!",
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n",
    "<code>get_weather(city='Paris', unit=\"celsius\")</code>",
    "What is 12 times 8? It's 96 — or 0.5e3, 1,234,567.89 and 2026-12-04.",
    "   leading spaces, trailing tabs\t\t\nand\r\nnew lines\n\n\n",
    "你好，今天北京的天气怎么样？温度是二十一度。",
    "émigré naïve façade — ü ß ø Ω 😀👍🏽",
    "def f(x):\n    return {'a': [1, 2, 3]}  # comment",
    "I'm you're they'll we've HE'S",
    "",
]


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    return Vocabulary(require_smollm2())


@pytest.mark.parametrize("text", TEXTS)
def test_the_ids_are_llama_cpps(vocabulary: Vocabulary, llama_server: str, text: str) -> None:
    reply = httpx.post(f"{llama_server}/tokenize", json={"content": text, "add_special": False,
                                                         "parse_special": True}, timeout=30)
    reply.raise_for_status()
    assert vocabulary.tokenize(text) == reply.json()["tokens"]


@pytest.mark.parametrize("text", TEXTS)
def test_the_pieces_spell_the_text_again(vocabulary: Vocabulary, text: str) -> None:
    tokens = vocabulary.tokenize(text)
    assert b"".join(vocabulary.piece(token, special=True) for token in tokens).decode() == text


def test_special_tokens_and_ends(vocabulary: Vocabulary) -> None:
    start = vocabulary.special_token("<|im_start|>")
    assert start is not None and vocabulary.tokenize("<|im_start|>") == [start]
    end = vocabulary.special_token("<|im_end|>")
    assert end is not None and vocabulary.is_end(end)
    assert not vocabulary.is_end(vocabulary.tokenize("Hello")[0])
    assert vocabulary.special_token("Hello there, my friend") is None  # several tokens


def test_a_sentencepiece_vocabulary_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "llama2.gguf", {"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": ["a"]})
    with pytest.raises(VocabularyError, match=r"'llama' tokenizer.*OpenAI-compatible server"):
        Vocabulary(path)


def test_an_unknown_pre_tokenizer_is_named(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "new.gguf", {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "martian",
                                               "tokenizer.ggml.tokens": ["a"]})
    with pytest.raises(VocabularyError, match="pre-tokenizer 'martian'"):
        Vocabulary(path)
