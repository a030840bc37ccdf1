#!/usr/bin/env bash
# Installs what the test suite needs on a fresh machine: redis-server,
# chromium (Debian packages; the web page is tested in a real headless
# browser), bubblewrap (the policy's differential oracle runs bash in a
# bwrap sandbox), and curl, git and git-man (the program table's check).
# Idempotent; prints what it did. Runs as part of `make test`.
set -euo pipefail

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
# The policy's complete program entries are checked against the installed
# programs' own help and man pages (TestCompleteTablesMatchHelp).
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v git >/dev/null 2>&1 || need+=(git)
[ -e /usr/share/man/man1/git-log.1.gz ] || need+=(git-man)

if [ ${#need[@]} -eq 0 ]; then
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "test-deps: missing ${need[*]} and no apt-get; install them by hand" >&2
	exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "test-deps: installing ${need[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# The Debian package starts a system redis on :6379; the tests start their
# own servers on free ports, so the system one is not needed.
if command -v systemctl >/dev/null 2>&1; then
	$sudo systemctl disable --now redis-server >/dev/null 2>&1 || true
fi
