#!/usr/bin/env bash
# Runs the whole test suite against a throwaway embedded PostgreSQL of its own, never the user's data.
# KENFOLD_TEST_DATABASE_URL points the suite at another server instead (Django creates test_* databases there).
set -euo pipefail
cd "$(dirname "$0")/.."

home=$(mktemp -d "${TMPDIR:-/tmp}/kenfold-test.XXXXXX")
# As root (CI, containers) the embedded server runs as a system user that Kenfold creates on first use.
# Every run uses a name that does not exist yet, so every run goes through that first start (several
# processes creating the user at once) instead of passing because an earlier run left the user behind.
server_user=""
if [ "$(id -u)" -eq 0 ]; then
  server_user="kenfold-t$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
  if id "$server_user" >/dev/null 2>&1; then
    echo "the test server user $server_user exists already; run make test again" >&2
    exit 1
  fi
  export KENFOLD_EMBEDDED_SERVER_USER="$server_user"
  echo "make test: the embedded PostgreSQL runs as $server_user, a system user the suite's first start creates"
fi
cleanup() {
  KENFOLD_HOME="$home" .venv/bin/python manage.py db stop >/dev/null 2>&1 || true
  if [ -n "$server_user" ] && id "$server_user" >/dev/null 2>&1; then
    # Clusters of tests that did not stop theirs still run as that user; they belong to this run only.
    pkill -KILL -u "$server_user" 2>/dev/null || true
    sleep 0.5
    userdel "$server_user" 2>/dev/null || echo "could not remove the test server user $server_user" >&2
    getent group "$server_user" >/dev/null && groupdel "$server_user" 2>/dev/null || true
  fi
  rm -rf "$home"
}
trap cleanup EXIT

export KENFOLD_HOME="$home"
# A test cluster is thrown away afterwards, so it need not survive a power cut: this makes it much faster.
export KENFOLD_EMBEDDED_DURABLE=false
unset KENFOLD_DATABASE_URL KENFOLD_DATABASE_PASSWORD KENFOLD_PUBLIC_URL
if [ -n "${KENFOLD_TEST_DATABASE_URL:-}" ]; then
  export KENFOLD_DATABASE_URL="$KENFOLD_TEST_DATABASE_URL"
fi

# Two workers (pytest-xdist), one test database each on the same throwaway cluster; a module's tests stay
# on one worker, so a module's server or cluster starts once (2026-12-01, this 2-core machine: 3:04 against
# 4:52 in one process).
set +e
# Temporary folders under the throwaway home, not the shared /tmp/pytest-of-$USER: another pytest run on
# the same machine prunes old runs there and resets its mode, which pulled folders (and the clusters in
# them) from under a running suite.
.venv/bin/python -m pytest -n 2 --dist loadfile --basetemp "$home/pytest" "$@"
status=$?
set -e
# pytest exits 5 when it collected nothing: that is a failure here, a suite that runs no test proves nothing.
exit $status
