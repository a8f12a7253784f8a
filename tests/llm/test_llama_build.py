"""The llama.cpp that voxcall runs (the prebuilt ``xllamacpp`` wheel, in process and in the scale-out launcher)
is a portable build: without AMX kernels, which crash on the first prompt on some CPUs that have AMX, and with the
AVX2 kernels every x86-64 machine of the last decade runs."""

from __future__ import annotations

import platform

import pytest

from tests.requirements import require_module


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the kernels named are x86-64's")
def test_the_prebuilt_engine_is_portable() -> None:
    features = require_module("xllamacpp").get_system_info()
    assert "AVX2 = 1" in features
    assert "AMX_INT8 = 1" not in features and "AVX512 = 1" not in features  # not tuned to the building CPU
