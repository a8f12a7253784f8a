"""The llama.cpp that voxcall runs is the portable build of ``deploy/llama-build.env``: without AMX kernels, which
crash on the first prompt on some CPUs that have AMX (the in-process binding and ``llama-server`` alike)."""

from __future__ import annotations

import subprocess
import threading

from tests.llm.test_llamacpp_server import free_port, stop
from tests.requirements import require_llama_server, require_module, require_smollm2

STARTUP_TIMEOUT_S = 60.0


def test_the_in_process_binding_has_no_amx_kernels() -> None:
    features = require_module("llama_cpp").llama_print_system_info().decode()
    assert "AMX_INT8 = 1" not in features and "AVX512 = 1" not in features  # not tuned to the building CPU


def test_llama_server_has_no_amx_kernels() -> None:
    command = [str(require_llama_server()), "--model", str(require_smollm2()), "--host", "127.0.0.1",
               "--port", str(free_port()), "-lv", "4"]  # verbosity 4 prints the CPU features
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = threading.Timer(STARTUP_TIMEOUT_S, server.kill)  # a server that never says it: the read ends
    deadline.start()
    try:
        assert server.stdout is not None
        shown = next((line for line in server.stdout if "system info" in line or "system_info" in line), "")
    finally:
        deadline.cancel()
        stop(server)
    assert "CPU :" in shown and "AVX2 = 1" in shown
    assert "AMX_INT8 = 1" not in shown and "AVX512 = 1" not in shown
