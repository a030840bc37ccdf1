package admincli

import (
	"context"
	"io"

	"github.com/signoff-dev/signoff/internal/replay"
)

// The policy experiments live in internal/replay; these wrappers give them
// the connection flags, SIGNOFF_* variables and --config of every other
// subcommand, then hand over their own arguments. Their exit statuses are
// replay's (docs/OPERATIONS.md "Operating a fleet: replay and shadow"):
// replay exits 1 when a decision would change, 3 when the plane is
// unavailable.
func init() {
	commands["replay"] = command{"judge the audit stream's recorded decisions under a candidate policy (--policy FILE, --since 7d)", runReplay}
	commands["shadow"] = command{"`shadow set FILE` judges every request beside the live policy too; `shadow clear` ends it", runShadow}
}

func runReplay(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("replay", "--policy FILE [--since 7d] [--tenant ACCOUNT | --all-tenants] [--json]",
		"Re-judges the recorded requests of the audit stream under a candidate policy and reports every decision that would change. Decides nothing.", out, errw)
	policy := e.fs.String("policy", "", "the candidate policy `file` (YAML, as the broker's --policy)")
	since := e.fs.String("since", "7d", "replay the decisions recorded since this long ago (`7d`, 36h, 90m) or since this RFC 3339 time")
	var tenants replay.Tenants
	tenants.Bind(e.fs)
	if !e.parse(args) {
		return ExitUsage
	}
	if err := tenants.Validate(); err != nil {
		e.usageErr("%v", err)
		return ExitUsage
	}
	rargs := []string{"--policy", *policy, "--since", *since}
	if tenants.Account != "" {
		rargs = append(rargs, "--tenant", tenants.Account)
	}
	if tenants.All {
		rargs = append(rargs, "--all-tenants")
	}
	if e.json {
		rargs = append(rargs, "--json")
	}
	rargs = append(rargs, e.fs.Args()...)
	return e.runExperiment(ctx, replay.Replay, rargs)
}

func runShadow(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("shadow", "set FILE | clear",
		"Loads a candidate policy beside the live one on every replica (set), or ends it (clear). The live decision stands; differences are counted and audited.", out, errw)
	if !e.parse(args) {
		return ExitUsage
	}
	return e.runExperiment(ctx, replay.Shadow, e.fs.Args())
}

// runExperiment connects and runs one of internal/replay's entry points.
func (e *env) runExperiment(ctx context.Context, run func(context.Context, replay.Env, []string) int, args []string) int {
	if !e.connect(ctx) {
		return replay.ExitUnavailable
	}
	defer e.close()
	return run(ctx, replay.Env{NC: e.nc, Prefix: e.conn.Prefix, Stdout: e.out, Stderr: e.errw}, args)
}
