#!/usr/bin/env bash
# Installs what the test suite needs on a fresh machine: redis-server,
# chromium (Debian packages; the web page is tested in a real headless
# browser), bubblewrap (the policy's differential oracle runs bash in a
# bwrap sandbox, and in zsh, which may run an agent's command), and the programs whose complete entries the program
# table's check reads (curl, git and git-man, diffutils, mawk — Debian's
# awk, the one the awk entry is checked against —, jq with its man page,
# make, tar, sed, python3, ripgrep, fd-find, findutils, nodejs, xxd; go is the
# toolchain that runs the tests, and builds kubectl and helm, which Debian
# does not package, below; coreutils is always there).
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
command -v diff >/dev/null 2>&1 || need+=(diffutils)
command -v mawk >/dev/null 2>&1 || need+=(mawk) # the awk entry is checked against mawk -W usage
command -v jq >/dev/null 2>&1 || need+=(jq)
[ -e /usr/share/man/man1/jq.1.gz ] || need+=(jq) # jq lists its options in its man page
command -v make >/dev/null 2>&1 || need+=(make)
command -v tar >/dev/null 2>&1 || need+=(tar)
command -v sed >/dev/null 2>&1 || need+=(sed)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
command -v fdfind >/dev/null 2>&1 || need+=(fd-find) # Debian's name for fd
command -v find >/dev/null 2>&1 || need+=(findutils)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v strace >/dev/null 2>&1 || need+=(strace) # the real-program oracle traces under it
command -v zsh >/dev/null 2>&1 || need+=(zsh) # the zsh oracle runs each corpus command in real zsh too
command -v xxd >/dev/null 2>&1 || need+=(xxd) # the xxd entry is checked against xxd -h

# kubectl and helm are not Debian packages: their complete entries are
# checked against builds of them from the Go module proxy, at the versions
# scripts/helpbins/go.mod pins, in .cache/helpbins (pkg/policy/shell's
# help_cobra_test.go). About two and a half minutes on two cores the first
# time; skipped while both are there at those versions.
helpbins() {
	local root dir mod kver hver
	root="$(cd "$(dirname "$0")/.." && pwd)"
	dir="$root/.cache/helpbins"
	mod="$root/scripts/helpbins"
	kver="v1.$(awk '$1 == "k8s.io/kubectl" { sub(/^v0\./, "", $2); print $2 }' "$mod/go.mod")"
	hver="$(awk '$1 == "helm.sh/helm/v3" { print $2 }' "$mod/go.mod")"
	if [ -x "$dir/kubectl" ] && [ -x "$dir/helm" ] &&
		[ "$("$dir/kubectl" version --client -o json 2>/dev/null | grep -o '"gitVersion": *"[^"]*"' | grep -o 'v[^"]*')" = "$kver" ] &&
		[ "$(HOME=/nonexistent "$dir/helm" version --template '{{.Version}}' 2>/dev/null)" = "$hver" ]; then
		return 0
	fi
	echo "test-deps: building kubectl $kver and helm $hver into .cache/helpbins"
	mkdir -p "$dir"
	(cd "$mod" && go build -trimpath -o "$dir/" \
		-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$kver -X helm.sh/helm/v3/internal/version.version=$hver" \
		./kubectl helm.sh/helm/v3/cmd/helm)
}
helpbins

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
