"""The GGUF metadata reader: values of every kind it meets, the packaged model's own metadata, and clear errors for
files that are not GGUF or end early."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.llm.local.gguf_files import write_gguf
from tests.requirements import require_smollm2
from voxcall.llm.local.gguf import GGUFError, read_metadata


def test_values_of_each_kind_come_back_as_written(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "tiny.gguf", {
        "general.architecture": "llama", "llama.context_length": 8192, "scale": 0.5, "add_bos": True,
        "tokenizer.ggml.tokens": ["a", "b", "ab", "你好"], "tokenizer.ggml.token_type": [1, 1, 1, 3]})
    meta = read_metadata(path)
    assert meta["general.architecture"] == "llama" and meta["llama.context_length"] == 8192
    assert meta["scale"] == 0.5 and meta["add_bos"] is True
    assert meta["tokenizer.ggml.tokens"] == ["a", "b", "ab", "你好"]
    assert isinstance(meta["tokenizer.ggml.token_type"], np.ndarray)
    assert meta["tokenizer.ggml.token_type"].tolist() == [1, 1, 1, 3]


def test_the_packaged_model_reads_as_llama_cpp_loads_it() -> None:
    meta = read_metadata(require_smollm2())
    assert meta["general.architecture"] == "llama"
    assert meta["tokenizer.ggml.model"] == "gpt2"
    tokens, merges = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.merges"]
    assert len(tokens) == 49152 and len(meta["tokenizer.ggml.token_type"]) == len(tokens)
    assert len(merges) > 40_000 and all(" " in merge for merge in merges[:100])
    assert "<|im_start|>" in meta["tokenizer.chat_template"]


def test_a_file_that_is_not_gguf_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "model.bin"
    for content in (b"PK\x03\x04 a zip, not a model", b""):
        path.write_bytes(content)
        with pytest.raises(GGUFError, match=r"model\.bin is not a GGUF file"):
            read_metadata(path)


def test_a_file_cut_inside_its_metadata_is_refused(tmp_path: Path) -> None:
    whole = write_gguf(tmp_path / "whole.gguf", {"tokenizer.ggml.tokens": ["x" * 50] * 20}).read_bytes()
    for cut in (30, len(whole) // 2, len(whole) - 1):
        path = tmp_path / f"cut{cut}.gguf"
        path.write_bytes(whole[:cut])
        with pytest.raises(GGUFError):
            read_metadata(path)


def test_an_unknown_version_is_named(tmp_path: Path) -> None:
    with pytest.raises(GGUFError, match="GGUF version 9 is not supported"):
        read_metadata(write_gguf(tmp_path / "future.gguf", {"a": 1}, version=9))
