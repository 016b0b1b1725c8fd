"""The client runs beside a checkout, with no server installed: its distribution installs and works alone."""

import subprocess
from pathlib import Path

SERVER_SIDE = ("django", "ninja", "psycopg", "psycopg_pool", "pgvector", "onnxruntime", "numpy", "mcp")


def test_the_client_distribution_installs_alone_and_imports_no_server_package(
    standalone_client: Path,
) -> None:
    code = (
        "import importlib, importlib.util, pkgutil, sys\n"
        f"server_side = {SERVER_SIDE!r}\n"
        "installed = [name for name in server_side if importlib.util.find_spec(name) is not None]\n"
        "import kenfold_client, kenfold_common\n"
        "names = [f'{package.__name__}.{m.name}' for package in (kenfold_client, kenfold_common)\n"
        "         for m in pkgutil.iter_modules(package.__path__)]\n"
        "for name in names: importlib.import_module(name)\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & set(server_side))\n"
        "print(installed, loaded, 'kenfold_client.refs' in names, 'kenfold_common.secrets' in names)\n"
    )
    env = {"PATH": "/usr/bin:/bin"}  # in particular no DJANGO_SETTINGS_MODULE and no PYTHONPATH
    result = subprocess.run(
        [str(standalone_client / "python"), "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert result.stdout == "[] [] True True\n", "nothing of the server is installed or imported"


def test_the_kenfold_command_of_the_distribution_answers_help(standalone_client: Path) -> None:
    result = subprocess.run(
        [str(standalone_client / "kenfold"), "refs", "sync", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--key-env" in result.stdout and "--dir" in result.stdout
