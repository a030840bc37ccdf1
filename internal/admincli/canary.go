package admincli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

func init() {
	commands["canary"] = command{"`canary set FILE --share 10% --max-ask-rate R --max-deny-rate R` applies a candidate policy to a share of sessions, rolled back past a bound; `canary clear`, `canary status`", runCanary}
}

const canaryAbout = `set FILE applies the candidate policy FILE for real to the sessions it selects — a share
of the sessions (a stable hash of the session id), narrowed by --agent-type and/or
--agent — on every replica. When, within a window, the canary's decisions ask or deny
more often than the bounds allow (after --min-requests decisions), one replica rolls it
back: the live policy decides every request again, and the audit stream and the log
say so. clear ends it (active or rolled back); status shows it and its window's counts.`

func runCanary(ctx context.Context, args []string, out, errw io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(errw, "Usage: signoff admin canary (set FILE --share P% --max-ask-rate R --max-deny-rate R [flags] | clear | status)\n")
		return ExitUsage
	}
	sub, rest := canarySubcommand(args)
	switch sub {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(errw, "Usage: signoff admin canary (set FILE [flags] | clear | status)\n\n")
		return runCanarySet(ctx, []string{"--help"}, out, errw)
	case "set":
		return runCanarySet(ctx, rest, out, errw)
	case "clear", "status":
		e := newEnv("canary "+sub, "", canaryAbout, out, errw)
		if sub == "status" {
			return e.call(ctx, rest, e.noArgs, messages.AdminOpCanaryStatus, noRequest, func(rep messages.AdminReply) int {
				return e.emitCanary(rep.Canary)
			})
		}
		return e.call(ctx, rest, e.noArgs, messages.AdminOpClearCanary, noRequest, e.emitMessage)
	}
	fmt.Fprintf(errw, "signoff admin canary: unknown subcommand %q (want set, clear or status)\n", args[0])
	return ExitUsage
}

// canarySubcommand finds the subcommand (set, clear, status) among args,
// which connection flags may precede, and returns it and the other args;
// none found: the first argument, as the unknown subcommand.
func canarySubcommand(args []string) (string, []string) {
	for i, a := range args {
		switch a {
		case "set", "clear", "status":
			return a, append(append([]string{}, args[:i]...), args[i+1:]...)
		}
	}
	return args[0], args[1:]
}

// canaryFlags are set's flags.
type canaryFlags struct {
	share               string
	agentType, agent    string
	maxAskRate, maxDeny optRate
	minRequests         int64
	window              time.Duration
}

func runCanarySet(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("canary set", "FILE --share 10% --max-ask-rate 0.3 --max-deny-rate 0.1 [--agent-type T] [--agent GLOB] [--min-requests 50] [--window 10m]", canaryAbout, out, errw)
	var f canaryFlags
	e.fs.StringVar(&f.share, "share", "", "the share of sessions under the canary, `10%` (default 100% with --agent-type or --agent)")
	e.fs.StringVar(&f.agentType, "agent-type", "", "only calls of this agent type")
	e.fs.StringVar(&f.agent, "agent", "", "only agents whose id matches this `glob`")
	e.fs.Var(&f.maxAskRate, "max-ask-rate", "roll back when more than this share of the canary's decisions ask (`rate` 0 to 1; required)")
	e.fs.Var(&f.maxDeny, "max-deny-rate", "roll back when more than this share of them deny (`rate` 0 to 1; required)")
	e.fs.Int64Var(&f.minRequests, "min-requests", 50, "decisions a window needs before its rates count")
	e.fs.DurationVar(&f.window, "window", 10*time.Minute, "the counting window")
	args, file := fileFirst(e, args)
	var spec *messages.CanarySpec
	check := func() bool {
		if !e.noArgs() {
			return false
		}
		if file == "" {
			return e.usageErr("canary set needs the candidate policy FILE")
		}
		var err error
		if spec, err = f.spec(file); err != nil {
			return e.usageErr("%v", err)
		}
		return true
	}
	withSpec := func() messages.AdminRequest { return messages.AdminRequest{Canary: spec} }
	return e.call(ctx, args, check, messages.AdminOpSetCanary, withSpec, func(rep messages.AdminReply) int {
		if !e.json {
			fmt.Fprintln(e.out, rep.Message)
			return ExitOK
		}
		return e.emitCanary(rep.Canary)
	})
}

// fileFirst takes set's FILE out of args wherever it stands (Go's flag
// package stops at the first argument that is not a flag).
func fileFirst(e *env, args []string) ([]string, string) {
	e.fs.SetOutput(io.Discard) // e.start parses again and reports
	defer e.fs.SetOutput(e.errw)
	if e.fs.Parse(args) != nil {
		return args, ""
	}
	pos := e.fs.Args()
	if len(pos) == 0 {
		return args, ""
	}
	rest := append(append([]string{}, args[:len(args)-len(pos)]...), pos[1:]...)
	return rest, pos[0]
}

// spec checks the flags and the file (it must load as a policy: its
// line-precise error otherwise) and returns the canary to send.
func (f *canaryFlags) spec(file string) (*messages.CanarySpec, error) {
	share := 100.0
	switch {
	case f.share != "":
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(f.share), "%"), 64)
		if err != nil {
			return nil, fmt.Errorf("--share %q: want a percentage such as 10%%", f.share)
		}
		share = v
	case f.agentType == "" && f.agent == "":
		return nil, fmt.Errorf("select the canary's calls: --share P%%, --agent-type T and/or --agent GLOB")
	}
	if !f.maxAskRate.set || !f.maxDeny.set {
		return nil, fmt.Errorf("--max-ask-rate and --max-deny-rate are required (rates from 0 to 1): they bound the canary")
	}
	if _, err := policy.Load(file); err != nil {
		return nil, fmt.Errorf("candidate policy: %w", err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	spec := &messages.CanarySpec{Policy: string(data), SharePercent: share, MaxAskRate: f.maxAskRate.v, MaxDenyRate: f.maxDeny.v,
		MinRequests: f.minRequests, WindowMS: f.window.Milliseconds()}
	if f.agentType != "" || f.agent != "" {
		spec.Selector = &messages.Selector{AgentType: f.agentType, Agent: f.agent}
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	return spec, nil
}

// optRate is a required rate flag: set says it was given.
type optRate struct {
	v   float64
	set bool
}

func (r *optRate) String() string {
	if r == nil || !r.set {
		return ""
	}
	return strconv.FormatFloat(r.v, 'f', -1, 64)
}

func (r *optRate) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q: want a rate from 0 to 1", s)
	}
	r.v, r.set = v, true
	return nil
}

// emitCanary prints a canary's status.
func (e *env) emitCanary(st *messages.CanaryStatus) int {
	if st == nil {
		st = &messages.CanaryStatus{}
	}
	return e.emit(st, func(w io.Writer) {
		c := st.Canary
		if c == nil {
			fmt.Fprintln(w, "no canary")
			return
		}
		sel := "-"
		if c.Spec.Selector != nil {
			sel = strings.TrimSpace(fmt.Sprintf("agent-type=%s agent=%s", c.Spec.Selector.AgentType, c.Spec.Selector.Agent))
		}
		row(w, "ID", "STATE", "POLICY", "LIVE", "SHARE", "SELECTOR", "MAX_ASK", "MAX_DENY", "SET")
		row(w, c.ID, c.State, c.PolicyVersion, c.LiveVersion, strconv.FormatFloat(c.Spec.SharePercent, 'f', -1, 64)+"%", sel,
			strconv.FormatFloat(c.Spec.MaxAskRate, 'f', -1, 64), strconv.FormatFloat(c.Spec.MaxDenyRate, 'f', -1, 64), when(c.SetAt))
		if n := st.Counts; n != nil {
			fmt.Fprintf(w, "window %s: allow %d, ask %d, deny %d\n", c.Spec.Window(), n.Allow, n.Ask, n.Deny)
		}
		if rb := c.Rollback; rb != nil {
			fmt.Fprintf(w, "rolled back %s by %s: %s\n", when(rb.At), rb.Replica, rb.Reason)
		}
	})
}
