#!/usr/bin/env sh
# Prints the path of a Python >= 3.12 interpreter, or explains what to install and fails.
# pyenv shims answer for versions that are installed but not selected, so each candidate is run, not
# just looked up on PATH; pyenv's own version folders are tried last.
set -u
check() {
  "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1
}
for cand in "${PYTHON:-}" python3.13 python3.12 python3; do
  [ -n "$cand" ] || continue
  if check "$cand"; then
    command -v "$cand" 2>/dev/null || echo "$cand"
    exit 0
  fi
done
root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
for cand in "$root"/versions/3.1[2-9]*/bin/python3; do
  if [ -x "$cand" ] && check "$cand"; then
    echo "$cand"
    exit 0
  fi
done
echo "Kenfold needs Python 3.12 or newer, and none was found (tried python3.13, python3.12, python3)." >&2
echo "Install one (e.g. 'apt install python3.12' or 'pyenv install 3.12'), or point PYTHON=/path/to/python3.12." >&2
exit 1
