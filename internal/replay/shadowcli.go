package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// adminTimeout bounds one admin request's wait for its reply.
const adminTimeout = 10 * time.Second

// Shadow is `signoff admin shadow set FILE` and `signoff admin shadow
// clear`: set loads the candidate policy in FILE beside the live one on
// every replica (kept in the modes bucket: a restarted replica judges with
// it too) — each request is judged by both, the live decision stands, the
// differences are counted (signoff_shadow_differences_total{from,to}) and
// recorded in the audit (`shadow`); clear ends it. The file is checked
// here first: one that does not load is refused with its line-precise
// error and nothing is sent. Exit: [ExitOK], [ExitUsage], [ExitUnavailable].
func Shadow(ctx context.Context, env Env, args []string) int {
	const usage = "Usage: signoff admin shadow set FILE | signoff admin shadow clear\n"
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(env.Stderr, usage)
		return ExitUsage
	}
	req := messages.AdminRequest{V: messages.Version}
	op := messages.AdminOpClearShadow
	switch {
	case args[0] == "set" && len(args) == 2:
		data, err := os.ReadFile(args[1])
		if err != nil {
			fmt.Fprintf(env.Stderr, "signoff admin shadow: %v\n", err)
			return ExitUsage
		}
		if _, err := policy.Parse(data, args[1]); err != nil {
			fmt.Fprintf(env.Stderr, "signoff admin shadow: candidate policy: %v\n", err)
			return ExitUsage
		}
		req.Policy, op = string(data), messages.AdminOpSetShadow
	case args[0] == "clear" && len(args) == 1:
	default:
		fmt.Fprintf(env.Stderr, "signoff admin shadow: unexpected arguments %q\n%s", args, usage)
		return ExitUsage
	}
	rep, code := adminCall(ctx, env, op, &req)
	if code != ExitOK {
		return code
	}
	fmt.Fprintln(env.Stdout, rep.Message)
	return ExitOK
}

// adminCall sends req on the admin subject of op and decodes the reply; a
// failure is reported on env.Stderr and returned as an exit code.
func adminCall(ctx context.Context, env Env, op string, req *messages.AdminRequest) (messages.AdminReply, int) {
	var rep messages.AdminReply
	subj, err := env.subjects()
	if err != nil {
		fmt.Fprintf(env.Stderr, "signoff admin: %v\n", err)
		return rep, ExitUsage
	}
	if env.NC == nil {
		fmt.Fprintln(env.Stderr, "signoff admin: not connected to NATS")
		return rep, ExitUnavailable
	}
	data, err := json.Marshal(req)
	if err != nil {
		fmt.Fprintf(env.Stderr, "signoff admin: %v\n", err)
		return rep, ExitUsage
	}
	cctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	msg, err := env.NC.RequestWithContext(cctx, subj.Admin(op), data)
	if err != nil {
		fmt.Fprintf(env.Stderr, "signoff admin: %s: no broker answered: %v\n", op, err)
		return rep, ExitUnavailable
	}
	if e, ok := messages.IsErrorReply(msg.Data); ok {
		fmt.Fprintf(env.Stderr, "signoff admin: %s refused (%s): %s\n", op, e.Error.Code, e.Error.Message)
		if e.Error.Code == messages.CodeInvalidRequest {
			return rep, ExitUsage
		}
		return rep, ExitUnavailable
	}
	if err := json.Unmarshal(msg.Data, &rep); err != nil {
		fmt.Fprintf(env.Stderr, "signoff admin: %s: unreadable reply: %v\n", op, err)
		return rep, ExitUnavailable
	}
	return rep, ExitOK
}
