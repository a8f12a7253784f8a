#!/usr/bin/env bash
# Build the llama-cpp-python wheel once, with voxcall's llama.cpp settings (deploy/llama-build.env: a portable
# build, no AMX kernels), into ${LLAMA_CACHE}/wheels/<version>-<flavor>/, and print the wheel's path. A wheel
# already there is reused; pip's own wheel cache is bypassed, since it keys a built wheel by its sdist alone and
# would hand back a build made with other settings. About 6-10 minutes on 2 cores; nothing is downloaded but the
# sdist and its build requirements from the package index.
#
#   PYTHON=.venv/bin/python deploy/build-llama-wheel.sh
set -euo pipefail
. "$(dirname "$0")/llama-build.env"
PYTHON="${PYTHON:-python3}"
folder="$LLAMA_CACHE/wheels/$LLAMA_CPP_PYTHON_VERSION-$LLAMA_FLAVOR"
wheel="$(ls "$folder"/llama_cpp_python-*.whl 2>/dev/null | head -n 1 || true)"
if [ -z "$wheel" ]; then
  echo "building llama-cpp-python $LLAMA_CPP_PYTHON_VERSION ($LLAMA_CMAKE_ARGS; once, cached in $folder)" >&2
  rm -rf "$folder.partial"
  CMAKE_ARGS="-DLLAVA_BUILD=OFF $LLAMA_CMAKE_ARGS" "$PYTHON" -m pip wheel --quiet --no-deps --no-cache-dir \
    --no-binary llama-cpp-python --wheel-dir "$folder.partial" "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" >&2
  rm -rf "$folder"
  mv "$folder.partial" "$folder"
  wheel="$(ls "$folder"/llama_cpp_python-*.whl | head -n 1)"
fi
echo "$wheel"
