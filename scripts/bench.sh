#!/usr/bin/env bash
# Runs every benchmark of docs/BENCHMARKS.md, section by section, with the
# commands that section names. `make bench` runs it; pass section names
# (policy, state, broker, processes, approvers, load) to run only those.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/test-deps.sh
sections=("$@")
[ ${#sections[@]} -gt 0 ] || sections=(policy state broker processes approvers load)

run() { echo "+ $*" >&2; "$@"; }

for s in "${sections[@]}"; do
	case "$s" in
	policy)
		run go test -run='^$' -bench=. -benchmem -count=8 ./pkg/policy/ ./pkg/policy/shell/ ./pkg/policy/globs/ ./pkg/messages/
		;;
	state)
		run go test -run='^$' -bench='BenchmarkHotPath' -benchmem -benchtime=5000x -count=10 ./pkg/session/redisstore/
		run go test -run='^$' -bench='BenchmarkPrepare|BenchmarkDecide' -benchmem -benchtime=3000x -count=5 ./pkg/session/redisstore/
		run go test -run='^$' -bench='BenchmarkReaperExpire100k' -benchtime=1x -count=3 -timeout=30m ./pkg/session/redisstore/
		SIGNOFF_MEMORY_PENDING=100000 run go test -run='TestMemoryPerPendingRequest' -v -count=1 -timeout=30m ./pkg/session/redisstore/
		run go test -run='^$' -bench=. -benchmem -benchtime=500x -count=3 ./pkg/session/memstore/ ./pkg/reaper/
		;;
	broker)
		# Seven passes of every broker benchmark in turn (not -count, which
		# repeats one benchmark before the next): each ratio compares a
		# benchmark with the baseline measured in the same pass.
		tmp=$(mktemp -d)
		run go test -c -o "$tmp/broker.test" ./internal/broker/
		for i in 1 2 3 4 5 6 7; do
			run "$tmp/broker.test" -test.run='^$' -test.bench=Broker -test.benchtime=5000x -test.timeout=30m
		done | tee "$tmp/broker.txt"
		run go run ./internal/benchratio < "$tmp/broker.txt"
		rm -rf "$tmp"
		;;
	processes)
		# The automatic path with nats-server, redis-server, the broker and
		# the baseline responder each in its own process, loaded from
		# outside (integration/cmd/procbench); binaries built from the
		# module cache and this tree, nothing downloaded.
		tmp=$(mktemp -d)
		run go build -o "$tmp/nats-server" github.com/nats-io/nats-server/v2
		run go build -o "$tmp/broker" ./cmd/broker
		run go build -o "$tmp/procbench" ./integration/cmd/procbench
		run "$tmp/procbench" -nats-server "$tmp/nats-server" -broker "$tmp/broker" \
			-passes 7 -requests 5000 -concurrency 1,16,64 -modes async,strict,off
		rm -rf "$tmp"
		;;
	approvers)
		run go test -run='^$' -bench=. -benchmem -count=3 ./internal/approverbot/...
		;;
	load)
		run ./scripts/build-images.sh
		SIGNOFF_LOAD_FULL=1 run go test -run='TestDistributed/load' -v -count=1 -timeout=30m ./integration/
		;;
	*)
		echo "bench: unknown section $s (want policy, state, broker, processes, approvers, load)" >&2
		exit 2
		;;
	esac
done
