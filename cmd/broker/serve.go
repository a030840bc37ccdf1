package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/signoff-dev/signoff/internal/brokerd"
	"github.com/signoff-dev/signoff/internal/cmdflag"
)

const serveUsage = `Usage:
  broker --dev [--listen ADDR] [--policy FILE] [--http ADDR]
  broker --nats URL --redis URL --policy FILE [flags]
  broker policy check [--policy FILE | --config FILE] [--mode MODE] < calls.jsonl
  broker health [--url URL]   (exit 0 when /readyz answers 200: a container healthcheck)

Runs one broker replica. --dev runs the whole plane in one process: an
embedded NATS server (with JetStream), an in-memory store and, without
--policy, the built-in dev policy. Production replicas share a NATS cluster
and Redis; run as many as you like. They need a policy file (--policy
builtin runs the built-in one on purpose).

Every flag can also be set as SIGNOFF_<FLAG> (upper case, '-' as '_') or as a
key of the --config file (YAML, keys are the flag names); flags win over the
environment, which wins over the file.

Flags:
`

// serve runs a broker replica until SIGINT or SIGTERM and returns the exit
// status: 0 after a clean shutdown, 1 when the broker failed, 2 for bad
// flags or settings.
func serve(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("broker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o brokerd.Options
	fill := o.Flags(fs)
	cmdflag.Usage(fs, serveUsage)
	if code, stop := cmdflag.Parse(fs, args); stop {
		return code
	}
	if !cmdflag.NoArgs(fs, stderr, "broker", "see broker --help") {
		return 2
	}
	if err := fill(); err != nil {
		fmt.Fprintf(stderr, "broker: %v\n", err)
		return 2
	}
	if err := o.Validate(); err != nil {
		fmt.Fprintf(stderr, "broker: %v\n", err)
		return 2
	}
	log, err := brokerd.NewLogger(&o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "broker: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := brokerd.Run(ctx, o, stdout, log); err != nil {
		log.Error("broker failed", "err", err)
		return 1
	}
	return 0
}
