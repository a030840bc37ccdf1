package admincli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// The outbreak breakers (docs/OPERATIONS.md "Operating a fleet:
// breakers"): a list, and the reset that lifts a trip.
func init() {
	commands["breakers"] = command{"the tripped outbreak breakers: rule, agents, since when", runBreakers}
	commands["breaker"] = command{"`breaker reset NAME` lifts a tripped breaker on every replica", runBreaker}
}

func runBreakers(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("breakers", "", "Lists the tripped outbreak breakers: what the agents hit, which agents, the agents now asked for every call.", out, errw)
	return e.call(ctx, args, e.noArgs, messages.AdminOpListBreakers, noRequest, func(rep messages.AdminReply) int {
		return e.emit(orEmpty(rep.Breakers), func(w io.Writer) {
			row(w, "BREAKER", "RULE", "AGENTS", "WINDOW", "ASKS", "TRIPPED", "TEAM")
			for _, t := range rep.Breakers {
				row(w, t.Breaker, t.Rule, strings.Join(t.Agents, ","), t.Window().String(), t.Selector.Key(), when(t.TrippedAt), t.Team)
			}
			fmt.Fprintln(w, rep.Message)
		})
	})
}

func runBreaker(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("breaker", "reset NAME [--by WHO]",
		"Resets the tripped breaker NAME: its agents are allowed again on every replica within a second,\n"+
			"the reset is audited, and the breaker counts from zero.", out, errw)
	var by string
	e.fs.StringVar(&by, "by", "", "who resets (default $USER)")
	pos, ok := e.parseInterspersed(args)
	if !ok {
		return ExitUsage
	}
	if len(pos) != 2 || pos[0] != "reset" {
		e.usageErr("want `breaker reset NAME` (see `signoff admin breakers` for the tripped ones)")
		return ExitUsage
	}
	req := messages.AdminRequest{Breaker: pos[1], By: operator(by)}
	if err := req.ValidateOp(messages.AdminOpBreakerReset); err != nil {
		e.usageErr("%v", err)
		return ExitUsage
	}
	if !e.connect(ctx) {
		return ExitNoBroker
	}
	defer e.close()
	return e.send(ctx, messages.AdminOpBreakerReset, req, e.emitMessage)
}

// parseInterspersed parses args with flags before, between and after the
// positional arguments it returns (`breaker reset NAME --json`).
func (e *env) parseInterspersed(args []string) ([]string, bool) {
	ok := e.parse(args)
	return e.fs.Args(), ok
}
