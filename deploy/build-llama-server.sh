#!/usr/bin/env bash
# Build llama.cpp's `llama-server` once, from the llama.cpp sources vendored in the llama-cpp-python sdist (the same
# version as the installed llama-cpp-python, so the engine and the in-process path read the same GGUF files), into
# ${VOXCALL_LLAMA_SERVER_CACHE:-~/.cache/voxcall/llama-server}/<version>-<flavor>/llama-server, with the settings of
# deploy/llama-build.env (a portable build: no AMX kernels). Nothing is downloaded but the sdist from the package
# index. A build already there is reused. Prints the binary's path as its last line.
#
#   PYTHON=.venv/bin/python deploy/build-llama-server.sh
#
# About 15 minutes on 2 cores (the server's web UI and the whole of ggml compile); JOBS sets the parallelism.
set -euo pipefail
. "$(dirname "$0")/llama-build.env"
PYTHON="${PYTHON:-python3}"
cache="${VOXCALL_LLAMA_SERVER_CACHE:-$LLAMA_CACHE/llama-server}"
version="$("$PYTHON" -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))' 2>/dev/null \
  || echo "$LLAMA_CPP_PYTHON_VERSION")"
target="$cache/$version-$LLAMA_FLAVOR/llama-server"
if [ -x "$target" ]; then
  echo "$target"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "building llama-server $version in $work (once; cached in $cache)" >&2
"$PYTHON" -m pip download --quiet --no-deps --no-binary :all: --dest "$work" "llama-cpp-python==$version" >&2
tar -xzf "$work"/llama_cpp_python-*.tar.gz -C "$work"
src="$(echo "$work"/llama_cpp_python-*/vendor/llama.cpp)"
if ! command -v cmake >/dev/null 2>&1; then  # the build tools from the package index, as pip's own build uses
  "$PYTHON" -m pip install --quiet --target "$work/tools" cmake ninja >&2
  export PATH="$work/tools/bin:$PATH"
fi
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
cmake -S "$src" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF $LLAMA_CMAKE_ARGS >&2
cmake --build "$work/build" --target llama-server --parallel "${JOBS:-$(nproc)}" >&2
mkdir -p "$(dirname "$target")"
cp "$work/build/bin/llama-server" "$target.partial"
mv "$target.partial" "$target"
echo "$target"
