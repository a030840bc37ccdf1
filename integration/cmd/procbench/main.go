package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1 // the run finished, but some request failed or a process died
	exitUsage  = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches on the role and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	role := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		role, args = args[0], args[1:]
	}
	switch role {
	case "load":
		c, err := parseLoad(args, stderr)
		if err != nil {
			return usage(err, stderr)
		}
		r, err := runLoad(ctx, c)
		if err != nil {
			fmt.Fprintf(stderr, "procbench load: %v\n", err)
			return exitFailed
		}
		_ = json.NewEncoder(stdout).Encode(r)
		if r.Errors > 0 {
			return exitFailed
		}
		return exitOK
	case "baseline":
		if err := serveBaseline(ctx, args, stdout, stderr); err != nil {
			return usage(err, stderr)
		}
		return exitOK
	case "run":
		c, err := parseRun(args, stderr)
		if err != nil {
			return usage(err, stderr)
		}
		sum, err := orchestrate(ctx, c, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "procbench: %v\n", err)
			return exitFailed
		}
		sum.write(stdout)
		if sum.Errors > 0 {
			fmt.Fprintf(stderr, "procbench: %d requests failed\n", sum.Errors)
			return exitFailed
		}
		if c.replicaCPU > 0 {
			over := sum.replicaCPUOver(c.replicaCPU)
			for _, o := range over {
				fmt.Fprintf(stderr, "procbench: bound broken: %s\n", o)
			}
			if len(over) > 0 {
				return exitFailed
			}
		}
		return exitOK
	}
	return usage(fmt.Errorf("unknown role %q (want run, load or baseline)", role), stderr)
}

func usage(err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "procbench: %v\n", err)
	return exitUsage
}

// intList is a flag of comma-separated positive integers.
type intList []int

func (l *intList) String() string {
	s := make([]string, len(*l))
	for i, n := range *l {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(v string) error {
	var out intList
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}
