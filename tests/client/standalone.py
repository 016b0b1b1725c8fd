"""The client distribution (client/) installed alone into a fresh venv, as on an agent's machine.

Only `pip install ./client` runs there: no Django, no psycopg, no onnxruntime. Its dependencies come from
the wheelhouse `make test` fills (.venv/wheelhouse), so no package index is asked during the tests.
"""

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WHEELHOUSE = REPO / ".venv" / "wheelhouse"


def build_standalone_client(folder: Path, *, python: str = sys._base_executable) -> Path:
    """A venv in `folder` with only the client distribution, made by the interpreter `python` (this one's
    base by default; the wheelhouse also holds the Python 3.11 wheels); returns its bin/ folder."""
    # A copy, because pip builds in the source tree (build/ and *.egg-info would land in client/).
    source = folder / "source"
    shutil.copytree(
        REPO / "client", source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    venv = folder / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, capture_output=True)
    result = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--find-links",
            str(WHEELHOUSE),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"installing the client distribution failed (run `make setup` first?):\n{result.stderr}"
        )
    return venv / "bin"
