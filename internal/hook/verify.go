package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/signoff-dev/signoff/internal/agentcfg"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// verify checks, after a call ran (Claude Code's PostToolUse), that a call
// an approver approved with changes ran with the approver's arguments. The
// hook answers such an approval with allow and updatedInput and trusts the
// host to run that input; Claude Code versions have dropped updatedInput
// (for Edit, or with a second PreToolUse hook) and run the agent's
// original call, approved in the approver's name (red team AT F5). The
// call has run by now: what verify can do is say so — to the model (a
// block: its result came from arguments nobody approved) and to the user —
// and log it. A call without an approval with changes, one the brokers
// cannot tell of, or a broker that cannot be reached, passes in silence:
// verify reports, it does not gate.
func verify(ctx context.Context, cfg Config, in Input, ans *answerer) {
	id := agentcfg.Token(in.ToolUseID)
	if id == "" || in.SessionID == "" && cfg.Session == "" {
		ans.write(nil, ExitOK)
		return
	}
	c, nc, _, err := session(ctx, cfg, in)
	if err != nil {
		ans.log.Warn("could not check that the call ran as approved", "err", err)
		ans.write(nil, ExitOK)
		return
	}
	defer nc.Close()
	rc, err := c.Status(ctx, id)
	if err != nil || rc.Decision == nil || !rc.Decision.Edited() || rc.Decision.Outcome != messages.OutcomeAllow {
		ans.write(nil, ExitOK)
		return
	}
	if ranAsApproved(rc.Decision.UpdatedArguments, in.ToolInput) {
		ans.write(nil, ExitOK)
		return
	}
	who := rc.Decision.DecidedBy.Display
	if who == "" {
		who = rc.Decision.DecidedBy.ID
	}
	ans.log.Error("an approval with changes ran with other arguments", "request_id", id, "tool", in.ToolName, "decided_by", who)
	out, _ := json.Marshal(hookOutput{
		Decision: "block",
		Reason: fmt.Sprintf("Tool '%s' ran with arguments that were not approved: %s approved it only with changed arguments (%s), "+
			"and the host ran other ones. Treat its result as unapproved and stop; tell the user.", in.ToolName, who, rc.Decision.UpdatedArguments),
		SystemMessage: fmt.Sprintf("Signoff: %s ran with arguments %s did not approve (the approval with changes was not applied by Claude Code). Check what it did.", in.ToolName, who),
	})
	ans.write(out, ExitOK)
}

// ranAsApproved reports whether the tool input that ran is the approved
// one: the same arguments with the same values, none more — an approver's
// change may be a key taken out (dangerouslyDisableSandbox, replace_all;
// red team AU F7), which a host that dropped the change still has.
// Unreadable input did not run as approved.
func ranAsApproved(approved, ran json.RawMessage) bool {
	var a, r any
	if decode(approved, &a) != nil || decode(ran, &r) != nil {
		return false
	}
	return reflect.DeepEqual(a, r)
}

func decode(raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v)
}
