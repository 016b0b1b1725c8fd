"""The client runs beside a checkout, often with no server installed: it must never import Django."""

import subprocess
import sys


def test_client_modules_import_without_django():
    code = (
        "import sys, pkgutil, importlib, kenfold_client\n"
        "names = [f'kenfold_client.{m.name}' for m in pkgutil.iter_modules(kenfold_client.__path__)]\n"
        "for name in names: importlib.import_module(name)\n"
        "assert 'kenfold_client.__main__' in names and 'kenfold_client.refs' in names, names\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'ninja', 'psycopg')))\n"
    )
    env = {"PATH": "/usr/bin:/bin"}  # in particular no DJANGO_SETTINGS_MODULE
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert result.stdout == "[]\n"
