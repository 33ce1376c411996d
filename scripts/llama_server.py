"""Start llama-cpp-python's OpenAI-compatible server with ggml's extra CPU buffer types off.

    python scripts/llama_server.py --model FILE --model_alias smollm2 --host 127.0.0.1 --port P \
        --n_threads 1 --interrupt_requests False

takes exactly the arguments of `python -m llama_cpp.server`. Why it exists: a wheel built with
`-DGGML_NATIVE=ON` on a CPU that reports AMX compiles ggml's AMX kernels and, by default, repacks
the model's weights for them ("amx repack tensor ..."). In a VM that advertises AMX without
really providing it (a Firecracker guest, measured here) the first generated token dies with a
general protection fault on `ldtilecfg`: the server drops the connection and exits. Turning the
extra buffer types off (`llama_model_params.use_extra_bufts = False`, the library's own switch)
keeps the weights in plain CPU buffers; everything else is the unmodified server.
"""

from __future__ import annotations

import runpy

import llama_cpp.llama_cpp as _lib

_default_params = _lib.llama_model_default_params


def _params_without_extra_buffers() -> _lib.llama_model_params:
    params = _default_params()
    if hasattr(params, "use_extra_bufts"):  # older releases have no extra buffer types
        params.use_extra_bufts = False
    return params


_lib.llama_model_default_params = _params_without_extra_buffers

if __name__ == "__main__":
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
