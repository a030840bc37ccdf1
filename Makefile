# Signoff — build, test and run targets. `make test` is the project's test
# command (README, .ci/run): it installs what the tests need, then runs them.

GO        ?= go
PKGS      ?= ./...
BIN       ?= bin
GOFLAGS   ?=
TESTFLAGS ?= -race -count=1 -timeout 20m
SECTIONS  ?=

.PHONY: all build test test-deps lint run bench fuzz images clean helm-test keys

all: lint build

## build: compile the broker, the approver bot and signoff (agents' hooks, MCP gateway) into ./bin
build:
	CGO_ENABLED=0 $(GO) build $(GOFLAGS) -o $(BIN)/ ./cmd/...

## test-deps: install what the tests need (redis-server, chromium…) when
## missing, and build kubectl and helm for the program table's help check
test-deps:
	./scripts/test-deps.sh

## test: lint, build the images, then every test against real servers and
## containers (CI runs this), and the Helm chart's test (a module of its own).
## The container suite (integration/) runs after the other packages, not
## beside them: on two cores the race-enabled unit tests (the program
## table's help checks run kubectl and helm hundreds of times) starved its
## brokers' 500 ms store calls, which it counts against a 1 % cap.
INTEGRATION = '/integration(/|$$)'
test: test-deps lint images
	$(GO) test $(TESTFLAGS) $$($(GO) list $(PKGS) | grep -Ev $(INTEGRATION))
	@set -e; pkgs=$$($(GO) list $(PKGS) | grep -E $(INTEGRATION) || true); \
	if [ -n "$$pkgs" ]; then $(GO) test $(TESTFLAGS) $$pkgs; fi
	$(MAKE) fuzz FUZZTIME=300x FUZZ_SLOW=
	$(MAKE) helm-test

# deploy/helm is a nested Go module: Helm's library pulls in much of k8s.io,
# which stays out of the main module's build, vet and go.sum this way.
HELM_MOD = deploy/helm

# internal/tracetest/otelcol is a nested Go module too: the OpenTelemetry
# Collector (its OTLP receiver) that internal/tracetest builds once per test
# run and sends the decision path's spans to (go test ./... runs that test).
OTELCOL_MOD = internal/tracetest/otelcol

## helm-test: render the Helm chart with Helm's library and check every object
helm-test:
	cd $(HELM_MOD) && $(GO) test $(TESTFLAGS) ./...

## fuzz: the policy's fuzzers and the request decoder's, FUZZTIME each (make
## test runs 300 inputs each; run longer by hand: make fuzz FUZZTIME=10m).
## FuzzShellOracle runs real bash in bwrap on scripts from a grammar
## (pkg/policy/oracle_fuzz_test.go); FuzzDecodeRequestFast holds the fast
## request decoder to encoding/json (pkg/messages/request_fast_test.go);
## FuzzSedReader holds the sed script reader to GNU sed's own parse; it runs
## sed per input (a few hundred a second), which Go's fuzzing engine ends with
## "context deadline exceeded" in a short run, so make test leaves it out
## (FUZZ_SLOW=) and runs its seeds and TestSedReaderAgainstGNU instead.
## make test fuzzes each target for a count of inputs (300x), not a time: a
## time limit that ends while a slow input (FuzzShellOracle runs bash in
## bwrap) is running fails the run with the same error.
FUZZ_SLOW ?= 1
FUZZTIME ?= 2m
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzShellOracle$$' -fuzztime=$(FUZZTIME) ./pkg/policy/
	$(GO) test -run='^$$' -fuzz='^FuzzPathIndex$$' -fuzztime=$(FUZZTIME) ./pkg/policy/
	$(GO) test -run='^$$' -fuzz='^FuzzAnalyzeShell$$' -fuzztime=$(FUZZTIME) ./pkg/policy/shell/
	$(GO) test -run='^$$' -fuzz='^FuzzZshSameGrammar$$' -fuzztime=$(FUZZTIME) ./pkg/policy/shell/
	$(if $(FUZZ_SLOW),$(GO) test -run='^$$' -fuzz='^FuzzSedReader$$' -fuzztime=$(FUZZTIME) ./pkg/policy/shell/)
	$(GO) test -run='^$$' -fuzz='^FuzzDecodeRequestFast$$' -fuzztime=$(FUZZTIME) ./pkg/messages/

## images: the container images of deploy/ (built locally; no registry needed)
images:
	./scripts/build-images.sh

## lint: gofmt and go vet must be clean
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	cd $(HELM_MOD) && $(GO) vet ./...
	cd $(OTELCOL_MOD) && $(GO) vet ./...

## keys: the nkeys of the shipped planes (deploy/nats: broker, admin, the
## DEMO tenant's agent, approver and admin, auth.conf's roles), nkeys.env and
## the brokers' tenants.yaml, into the git-ignored deploy/nats/keys. Existing
## seeds are kept. Seeds are 0644 in a 0700 directory: compose bind-mounts
## single seeds into containers that run as another user.
KEYS_DIR ?= deploy/nats/keys
keys:
	$(GO) run ./deploy/nats/genkeys -dir $(KEYS_DIR) -readable

## run: the whole plane in one process (embedded NATS, memory store)
run:
	$(GO) run ./cmd/broker --dev

## bench: every benchmark of docs/BENCHMARKS.md (SECTIONS="policy broker" for some)
bench:
	./scripts/bench.sh $(SECTIONS)

clean:
	rm -rf $(BIN)
