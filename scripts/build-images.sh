#!/usr/bin/env bash
# Builds Signoff's container images (`make images`) without pulling
# anything: the Go programs are built here as static binaries
# (CGO_ENABLED=0, -trimpath) and copied into FROM-scratch images, and Redis
# is Debian's redis-server with the libraries it links.
#
#   signoff/broker:dev        SIGNOFF_IMAGE_BROKER         cmd/broker
#   signoff/approver-bot:dev  SIGNOFF_IMAGE_APPROVER_BOT   cmd/approver-bot
#   signoff/nats:dev          SIGNOFF_IMAGE_NATS           nats-server at go.mod's version
#   signoff/redis:dev         SIGNOFF_IMAGE_REDIS          Debian's redis-server
#   signoff/agent:dev         SIGNOFF_IMAGE_AGENT          integration/cmd/loadagent + cmd/signoff
#
# Usage: scripts/build-images.sh [--force] [broker|approver-bot|nats|redis|agent ...]
#
# With no names it builds all five. Each image carries a label with the hash
# of its inputs (Dockerfile and build context); an image whose inputs did
# not change is not built again, so a second run costs the Go build cache's
# check and a few `docker image inspect`s. --force rebuilds anyway.
#
# An image name that already exists but was not built by this script (an
# official nats or redis image you pulled and named in SIGNOFF_IMAGE_NATS,
# say) is left alone. The build contexts are assembled under deploy/build/
# (git-ignored; SIGNOFF_BUILD_DIR moves them).
set -euo pipefail

cd "$(dirname "$0")/.."

GO=${GO:-go}
DOCKER=${DOCKER:-docker}
BUILD_DIR=${SIGNOFF_BUILD_DIR:-deploy/build}
LABEL=dev.signoff.build.inputs

declare -A image=(
	[broker]=${SIGNOFF_IMAGE_BROKER:-signoff/broker:dev}
	[approver-bot]=${SIGNOFF_IMAGE_APPROVER_BOT:-signoff/approver-bot:dev}
	[nats]=${SIGNOFF_IMAGE_NATS:-signoff/nats:dev}
	[redis]=${SIGNOFF_IMAGE_REDIS:-signoff/redis:dev}
	[agent]=${SIGNOFF_IMAGE_AGENT:-signoff/agent:dev}
)
all=(broker approver-bot nats redis agent)

log() { echo "build-images: $*" >&2; }
die() {
	log "$*"
	exit 1
}

force=0
names=()
for arg in "$@"; do
	case $arg in
	--force) force=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		[[ -n ${image[$arg]+x} ]] || die "unknown image \"$arg\" (want: ${all[*]})"
		names+=("$arg")
		;;
	esac
done
[[ ${#names[@]} -gt 0 ]] || names=("${all[@]}")
want() {
	local n
	for n in "${names[@]}"; do [[ $n == "$1" ]] && return 0; done
	return 1
}

# --- What the build needs -------------------------------------------------

command -v "$DOCKER" >/dev/null 2>&1 ||
	die "docker not found: the images need a Docker Engine (https://docs.docker.com/engine/install/, or Debian's docker.io package)"
server=$("$DOCKER" version --format '{{.Server.Version}}' 2>&1) ||
	die "the Docker Engine does not answer (is the daemon running, and may this user use it?): $server"
command -v "$GO" >/dev/null 2>&1 || die "go not found: the binaries are built on this machine"

# Debian packages the images copy files from: redis-server (the redis
# image) and ca-certificates (the broker and the bot verify TLS servers).
need=()
want redis && { command -v redis-server >/dev/null 2>&1 || need+=(redis-server); }
{ want broker || want approver-bot; } && { [[ -s /etc/ssl/certs/ca-certificates.crt ]] || need+=(ca-certificates); }
if [[ ${#need[@]} -gt 0 ]]; then
	command -v apt-get >/dev/null 2>&1 || die "missing ${need[*]} and no apt-get; install them by hand"
	sudo=""
	[[ $(id -u) -eq 0 ]] || sudo="sudo"
	log "installing ${need[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
	# The Debian package starts a system redis on :6379; nothing here uses it.
	if [[ " ${need[*]} " == *" redis-server "* ]] && command -v systemctl >/dev/null 2>&1; then
		$sudo systemctl disable --now redis-server >/dev/null 2>&1 || true
	fi
fi

# --- Binaries ---------------------------------------------------------------

declare -A pkg=(
	[broker]=./cmd/broker
	[approver-bot]=./cmd/approver-bot
	[nats]=github.com/nats-io/nats-server/v2
	[agent]=./integration/cmd/loadagent
)
# Extra binaries an image carries: the NATS image's healthcheck (it is FROM
# scratch: nothing else could probe nats-server's /healthz), and signoff in
# the agent image (the hooks and MCP gateway of agents, docs/AGENTS.md).
declare -A extra_pkg=([nats]=./deploy/docker/healthcheck [agent]=./cmd/signoff)
declare -A extra_bin=([nats]=healthcheck [agent]=signoff)
declare -A bin=([broker]=broker [approver-bot]=approver-bot [nats]=nats-server [agent]=loadagent)

pkgs=()
for n in "${names[@]}"; do
	[[ -n ${pkg[$n]+x} ]] && pkgs+=("${pkg[$n]}")
	[[ -n ${extra_pkg[$n]+x} ]] && pkgs+=("${extra_pkg[$n]}")
done
mkdir -p "$BUILD_DIR/bin"
if [[ ${#pkgs[@]} -gt 0 ]]; then
	start=$SECONDS
	# One go build for all of them: the packages share the work and the
	# build cache makes a rebuild of unchanged code a quick check.
	# -trimpath makes the binaries reproducible (no local paths in them), so
	# their hashes, and the images', change only when their code does.
	CGO_ENABLED=0 GOOS=linux "$GO" build -trimpath -ldflags='-s -w' -o "$BUILD_DIR/bin/" "${pkgs[@]}"
	log "go build ${pkgs[*]}: $((SECONDS - start)) s"
fi

# --- Build contexts ----------------------------------------------------------

# fresh DIR empties (or makes) a build context.
fresh() {
	rm -rf "$1"
	mkdir -p "$1"
}

# redis_rootfs DIR copies redis-server, every library ldd lists for it and
# the dynamic loader into DIR at the paths the binary looks for them.
redis_rootfs() {
	local root=$1 src cli lib
	src=$(command -v redis-server)
	# redis-cli (Debian's redis-tools, a dependency of redis-server): the
	# image's healthcheck runs `redis-cli ping`, as with the official image.
	cli=$(command -v redis-cli) || die "redis-cli not found (Debian package redis-tools)"
	mkdir -p "$root/usr/bin" "$root/etc/redis"
	# Debian's redis-server is a symlink to redis-check-rdb; the binary
	# picks its role from argv[0], so it is copied under the server's name.
	cp -L "$src" "$root/usr/bin/redis-server"
	cp -L "$cli" "$root/usr/bin/redis-cli"
	local libs
	libs=$( (ldd "$src" && ldd "$cli") | sort -u) || die "ldd $src $cli failed: are they dynamic executables?"
	while read -r lib; do
		[[ -n $lib ]] || continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done < <(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$libs")
	[[ -n $(find "$root" -name 'ld-linux*' -print -quit) ]] ||
		die "ldd $src listed no dynamic loader; cannot assemble the redis image"
	cp deploy/docker/files/redis.conf "$root/etc/redis/redis.conf"
	cp deploy/docker/files/passwd deploy/docker/files/group "$root/etc/"
}

context() {
	local n=$1 dir=$BUILD_DIR/$1
	fresh "$dir"
	case $n in
	broker | approver-bot)
		cp /etc/ssl/certs/ca-certificates.crt "$dir/"
		cp "$BUILD_DIR/bin/${bin[$n]}" "$dir/"
		;;
	agent)
		cp "$BUILD_DIR/bin/${bin[$n]}" "$BUILD_DIR/bin/${extra_bin[$n]}" "$dir/"
		;;
	nats)
		cp "$BUILD_DIR/bin/${bin[$n]}" "$dir/"
		cp "$BUILD_DIR/bin/${extra_bin[$n]}" "$dir/signoff-healthcheck"
		mkdir "$dir/data"
		;;
	redis)
		redis_rootfs "$dir/rootfs"
		mkdir "$dir/data"
		;;
	esac
}

# inputs_hash N hashes everything image N is built from: its Dockerfile and
# every file, directory and mode of its context.
inputs_hash() {
	local dir=$BUILD_DIR/$1
	{
		sha256sum <"deploy/docker/$1.Dockerfile"
		(cd "$dir" && find . -print0 | LC_ALL=C sort -z | xargs -0 stat -c '%n %f' &&
			find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
	} | sha256sum | cut -c1-64
}

# --- Images -----------------------------------------------------------------

status=0
for n in "${names[@]}"; do
	name=${image[$n]}
	context "$n"
	hash=$(inputs_hash "$n")
	old_id=$("$DOCKER" image inspect --format '{{.Id}}' "$name" 2>/dev/null || true)
	if [[ -n $old_id ]]; then
		have=$("$DOCKER" image inspect --format "{{index .Config.Labels \"$LABEL\"}}" "$name")
		if [[ -z $have || $have == "<no value>" ]]; then
			log "$name exists and was not built by this script: left alone (unset or change its SIGNOFF_IMAGE_* name to build ours)"
			continue
		fi
		if [[ $have == "$hash" && $force -eq 0 ]]; then
			log "$name: up to date"
			continue
		fi
	fi
	start=$SECONDS
	if ! out=$("$DOCKER" build --quiet --label "$LABEL=$hash" \
		--label "org.opencontainers.image.title=signoff-$n" \
		-t "$name" -f "deploy/docker/$n.Dockerfile" "$BUILD_DIR/$n" 2>&1); then
		log "docker build $name failed:"
		echo "$out" >&2
		status=1
		continue
	fi
	new_id=$("$DOCKER" image inspect --format '{{.Id}}' "$name")
	# The previous build of this name is now untagged: remove it so repeated
	# builds do not pile up (Docker refuses while a container uses it).
	if [[ -n $old_id && $old_id != "$new_id" ]]; then
		"$DOCKER" image rm "$old_id" >/dev/null 2>&1 || true
	fi
	size=$("$DOCKER" image inspect --format '{{.Size}}' "$name")
	log "$name: built in $((SECONDS - start)) s ($((size / 1024 / 1024)) MiB)"
done
exit $status
