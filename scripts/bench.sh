#!/usr/bin/env bash
# Runs every benchmark of docs/BENCHMARKS.md, section by section, with the
# commands that section names. `make bench` runs it; pass section names
# (policy, state, broker, processes, approvers, load, curves) to run only
# those; curves runs the "Cost as work grows" curves (rules, grants,
# pending, devices, replicas), also one at a time: curve-rules,
# curve-grants, curve-pending, curve-devices, curve-replicas.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/test-deps.sh
sections=("$@")
[ ${#sections[@]} -gt 0 ] || sections=(policy state broker processes approvers load curves)
expanded=()
for s in "${sections[@]}"; do
	if [ "$s" = curves ]; then
		expanded+=(curve-rules curve-grants curve-pending curve-devices curve-replicas)
	else
		expanded+=("$s")
	fi
done
sections=("${expanded[@]}")

run() { echo "+ $*" >&2; "$@"; }

for s in "${sections[@]}"; do
	case "$s" in
	policy)
		run go test -run='^$' -bench=. -skip=Curve -benchmem -count=8 ./pkg/policy/ ./pkg/policy/shell/ ./pkg/policy/globs/ ./pkg/messages/
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
		run go test -run='^$' -bench=. -skip=Curve -benchmem -count=3 ./internal/approverbot/...
		;;
	curve-rules)
		# Five passes of the rules curve in turn (10 to 10k rules), then
		# the policy's load time at each size.
		tmp=$(mktemp -d)
		run go test -c -o "$tmp/policy.test" ./pkg/policy/
		for i in 1 2 3 4 5; do
			(cd pkg/policy && run "$tmp/policy.test" -test.run='^$' -test.bench='RulesCurve' -test.benchmem)
		done | tee "$tmp/rules.txt"
		# Bounds: a decision with 10k rules costs at most 1.5 times one with
		# 10 (flat in rules that cannot match); a load is at most twice
		# linear in rules.
		run go run ./internal/benchcurve -max 'RulesCurve/pipeline:ns/op<=1.5,RulesCurve/write_file:ns/op<=1.5,RulesCurveParse:ns/op<=2000' < "$tmp/rules.txt"
		rm -rf "$tmp"
		;;
	curve-grants)
		# Five passes of one grant-allowed call against 1 to 10k standing
		# agent grants (the serial sub-benchmark first, as a warm-up).
		# Bound: with 10k grants none of which applies, at most 1.2 times
		# the p50 with one (the grant index, docs/STATE.md).
		tmp=$(mktemp -d)
		run go test -c -o "$tmp/broker.test" ./internal/broker/
		for i in 1 2 3 4 5; do
			(cd internal/broker && run "$tmp/broker.test" -test.run='^$' -test.benchtime=1s \
				-test.bench='BrokerGrantAllow/(serial|grants=(1|10|100|1000|10000))$')
		done | tee "$tmp/grants.txt"
		run go run ./internal/benchcurve -max 'BrokerGrantAllow:p50-µs<=1.2' < "$tmp/grants.txt"
		rm -rf "$tmp"
		;;
	curve-pending)
		# One redis-server per count (1 to 100k pending), filled before
		# timing; five passes; prints the median table at the end.
		# Bounds: with 100k pending, the automatic path's read costs at most
		# 1.5 times, the ask path's writes at most twice, what they cost with
		# one.
		tmp=$(mktemp -d)
		SIGNOFF_PENDING_PASSES=5 run go test -run='^$' -bench='BenchmarkPendingCurve' -benchtime=1000x -timeout=60m ./pkg/session/redisstore/ | tee "$tmp/pending.txt"
		run go run ./internal/benchcurve -max 'PendingCurve/auto:ns/op<=1.5,PendingCurve/ask:ns/op<=2' < "$tmp/pending.txt"
		rm -rf "$tmp"
		;;
	curve-devices)
		tmp=$(mktemp -d)
		run go test -c -o "$tmp/web.test" ./internal/approverbot/web/
		for i in 1 2 3 4 5; do
			(cd internal/approverbot/web && run "$tmp/web.test" -test.run='^$' -test.bench='DevicesCurve' -test.benchtime=50x)
		done | tee "$tmp/devices.txt"
		# Bound: linear in devices, the CPU per device at 1k no more than
		# with one device.
		run go run ./internal/benchcurve -max 'DevicesCurve:cpu-µs/device<=1' < "$tmp/devices.txt"
		rm -rf "$tmp"
		;;
	curve-replicas)
		# 1, 2 and 3 broker processes against one nats-server and one
		# redis-server, loaded from outside. Bound: the CPU per decision of
		# all replicas together at most 4 times one replica's, up to three
		# replicas (on 2 cores throughput cannot grow with replicas).
		tmp=$(mktemp -d)
		run go build -o "$tmp/nats-server" github.com/nats-io/nats-server/v2
		run go build -o "$tmp/broker" ./cmd/broker
		run go build -o "$tmp/procbench" ./integration/cmd/procbench
		run "$tmp/procbench" -nats-server "$tmp/nats-server" -broker "$tmp/broker" \
			-passes 5 -requests 5000 -concurrency 1,16,64 -modes async -replicas 1,2,3 -max-replica-cpu 4
		rm -rf "$tmp"
		;;
	load)
		run ./scripts/build-images.sh
		SIGNOFF_LOAD_FULL=1 run go test -run='TestDistributed/load' -v -count=1 -timeout=30m ./integration/
		;;
	*)
		echo "bench: unknown section $s (want policy, state, broker, processes, approvers, load, curves, curve-rules, curve-grants, curve-pending, curve-devices, curve-replicas)" >&2
		exit 2
		;;
	esac
done
