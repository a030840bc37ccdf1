package replay

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/internal/cmdflag"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// Replay is `signoff admin replay --policy FILE [--since 7d] [--json]`:
// it judges the decisions recorded in the audit stream since then under
// the candidate policy in FILE, and prints every decision that would
// change and the totals per change (a table, or with --json one JSON
// [Report]). It decides and stores nothing. Exit: [ExitOK] when nothing
// would change, [ExitChanges] when something would, [ExitUsage] for bad
// flags or a policy that does not load, [ExitUnavailable] when the audit
// stream cannot be read.
func Replay(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("signoff admin replay", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	file := fs.String("policy", "", "the candidate policy `file` (YAML, as the broker's --policy)")
	sinceFlag := fs.String("since", "7d", "replay the decisions recorded since this long ago (`7d`, 36h, 90m) or since this RFC 3339 time")
	asJSON := fs.Bool("json", false, "print one JSON report instead of a table")
	var tenants Tenants
	tenants.Bind(fs)
	cmdflag.Usage(fs, `Usage: signoff admin replay --policy FILE [--since 7d] [--tenant ACCOUNT | --all-tenants] [--json]

Judges the requests recorded in the audit stream under the candidate policy
FILE and reports every decision that would change (request id, tool, old and
new action, the rule that decides now) and the totals per change, grants that
would no longer apply included. Decides nothing, stores nothing. On a tenant
plane, --tenant ACCOUNT replays that tenant's records (--all-tenants: every
tenant's and the plain subjects', all under the one candidate).
Exit 0: nothing would change; 1: something would; 2: bad usage or policy;
3: the audit stream cannot be read.

Flags:
`)
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if !cmdflag.NoArgs(fs, env.Stderr, "signoff admin replay", "") {
		return ExitUsage
	}
	if *file == "" {
		fmt.Fprintln(env.Stderr, "signoff admin replay: --policy FILE is required (the candidate policy)")
		return ExitUsage
	}
	if err := tenants.Validate(); err != nil {
		fmt.Fprintf(env.Stderr, "signoff admin replay: %v\n", err)
		return ExitUsage
	}
	since, err := ParseSince(*sinceFlag, time.Now())
	if err != nil {
		fmt.Fprintf(env.Stderr, "signoff admin replay: --since: %v\n", err)
		return ExitUsage
	}
	cand, err := policy.Load(*file)
	if err != nil {
		fmt.Fprintf(env.Stderr, "signoff admin replay: candidate policy: %v\n", err)
		return ExitUsage
	}
	subj, err := env.subjects()
	if err != nil {
		fmt.Fprintf(env.Stderr, "signoff admin replay: %v\n", err)
		return ExitUsage
	}
	if env.NC == nil {
		fmt.Fprintln(env.Stderr, "signoff admin replay: not connected to NATS")
		return ExitUnavailable
	}
	rep, err := Records(ctx, cand, since, func(yield func([]byte)) error {
		return readAudit(ctx, env.NC, tenants.Subjects(subj, ""), since, yield)
	})
	if err != nil {
		fmt.Fprintf(env.Stderr, "signoff admin replay: %v\n", err)
		return ExitUnavailable
	}
	if *asJSON {
		err = rep.WriteJSON(env.Stdout)
	} else {
		err = rep.WriteTable(env.Stdout)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "signoff admin replay: write the report: %v\n", err)
		return ExitUnavailable
	}
	if len(rep.Changes) > 0 {
		return ExitChanges
	}
	return ExitOK
}

// ParseSince parses a --since value relative to now: a duration of Go's
// syntax or a whole number of days ("7d"), or an RFC 3339 time. It must
// lie in the past.
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		if t.After(now) {
			return time.Time{}, fmt.Errorf("%q is in the future", s)
		}
		return t, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 3650 {
			return time.Time{}, fmt.Errorf("%q: want a whole number of days from 0 to 3650 (7d), a duration (36h) or an RFC 3339 time", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return time.Time{}, fmt.Errorf("%q: want a number of days (7d), a duration (36h) or an RFC 3339 time", s)
		}
	}
	if d < 0 {
		return time.Time{}, errors.New("a negative duration reaches into the future")
	}
	return now.Add(-d), nil
}
