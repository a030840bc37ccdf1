package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/signoff-dev/signoff/internal/brokerd"
	"github.com/signoff-dev/signoff/internal/buildinfo"
	"github.com/signoff-dev/signoff/internal/cmdflag"
	"github.com/signoff-dev/signoff/internal/healthcheck"
	"github.com/signoff-dev/signoff/pkg/policy"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the process exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) >= 1 && (args[0] == "version" || args[0] == "--version" || args[0] == "-version") {
		fmt.Fprintln(stdout, "broker", buildinfo.String())
		return 0
	}
	if len(args) >= 1 && args[0] == "health" {
		return healthcheck.Main("broker health", args[1:], brokerHealthURL(), stdout, stderr)
	}
	if len(args) >= 1 && args[0] == "policy" {
		if len(args) >= 2 && args[1] == "check" {
			return policyCheck(args[2:], stdin, stdout, stderr)
		}
		fmt.Fprintln(stderr, "broker: unknown policy command (want: broker policy check)")
		return 2
	}
	return serve(args, stdout, stderr)
}

// policyCheck is `broker policy check`. Exit status: 0 when every line was
// evaluated, 1 when some line could not be (its output line carries the
// error) or output failed, 2 for a usage error or an invalid policy file.
func policyCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("broker policy check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	policyFile := fs.String("policy", "", "policy `file` (YAML) to evaluate, as the broker's --policy; the built-in dev policy when empty")
	config := fs.String("config", "", "broker config `file` (as broker --config): evaluate the policy its \"policy\" key names")
	mode := fs.String("mode", "", "evaluate every call in this `mode` (always-ask, auto-edit or yolo) instead of the policy's")
	cmdflag.Usage(fs, `Usage: broker policy check [--policy FILE | --config BROKER-CONFIG] [--mode MODE] < calls.jsonl

Reads one JSON request per line ({"tool":"bash","arguments":{"command":"ls"}},
optionally "agent_type"), evaluates it against the policy and writes one JSON
decision per line. Exit status: 0 all lines evaluated, 1 some line invalid,
2 usage error or invalid policy file. See docs/POLICY.md.

Flags:
`)
	if code, stop := cmdflag.Parse(fs, args); stop {
		return code
	}
	if !cmdflag.NoArgs(fs, stderr, "broker policy check", "calls are read from stdin") {
		return 2
	}
	file, err := checkedPolicyFile(*policyFile, *config)
	if err != nil {
		fmt.Fprintf(stderr, "broker policy check: %v\n", err)
		return 2
	}
	p := policy.Default()
	if file != "" && file != brokerd.BuiltinPolicy {
		if p, err = policy.Load(file); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}
	var m policy.Mode
	if *mode != "" {
		var err error
		if m, err = policy.ParseMode(*mode); err != nil {
			fmt.Fprintf(stderr, "broker policy check: --mode: %v\n", err)
			return 2
		}
	}
	if err := policy.RunCheck(stdin, stdout, p, m); err != nil {
		fmt.Fprintf(stderr, "broker policy check: %v\n", err)
		return 1
	}
	return 0
}

// checkedPolicyFile returns the policy file `policy check` evaluates: the
// --policy flag, else the "policy" key of the broker config file named by
// --config ("" for the built-in policy).
func checkedPolicyFile(policyFlag, configFlag string) (string, error) {
	switch {
	case policyFlag != "" && configFlag != "":
		return "", errors.New("--policy and --config: give one (--policy names the policy file, --config a broker config file whose \"policy\" key names it)")
	case configFlag == "":
		return policyFlag, nil
	}
	file, err := brokerd.PolicyOfConfig(configFlag)
	if err != nil {
		return "", err
	}
	if file == "" {
		return "", fmt.Errorf("--config %s has no \"policy\" key: name the policy file there, or pass --policy FILE", configFlag)
	}
	return file, nil
}

// brokerHealthURL is what `broker health` probes by default: /readyz on the
// --http address the environment gives (SIGNOFF_HTTP, as in the image),
// else on the flag's default.
func brokerHealthURL() string {
	listen := os.Getenv("SIGNOFF_HTTP")
	if listen == "" {
		listen = "127.0.0.1:8080"
	}
	u, err := healthcheck.LocalURL(listen, "/readyz")
	if err != nil {
		return "http://127.0.0.1:8080/readyz"
	}
	return u
}
