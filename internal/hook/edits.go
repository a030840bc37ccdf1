package hook

import (
	"cmp"
	"strings"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// carriesEdits reports whether the host's hook output can replace a tool
// call's input, so that a call approved with changes runs as approved:
// Claude Code's updatedInput (PreToolUse hookSpecificOutput, and
// PermissionRequest's decision) does. Codex parses updatedInput but does
// not apply it on PreToolUse, and fails a PermissionRequest hook that sends
// it, so there an edited approval is answered with a deny.
func (h Host) carriesEdits() bool { return h == ClaudeCode }

// maxEditInMessage bounds the edited arguments quoted to the model.
const maxEditInMessage = 2000

// editedElsewhere turns an approval with changes, on a host that cannot run
// the changed call, into the deny that tells the model what the approver
// approved instead, so that it can ask for that call (which is then
// approved on its own).
func editedElsewhere(d *messages.Decision) *messages.Decision {
	out := *d
	out.Outcome = messages.OutcomeDeny
	out.UpdatedArguments = nil
	who := cmp.Or(d.DecidedBy.Display, d.DecidedBy.ID, "an approver")
	edit := string(d.UpdatedArguments)
	if len(edit) > maxEditInMessage {
		edit = strings.ToValidUTF8(edit[:maxEditInMessage], "") + "…"
	}
	out.Reason = who + " approved this call with changes, which this host cannot apply; the original call was not run"
	out.LLMMessage = "Tool " + quoteName(d.Tool) + " was not run: " + who + " approved it only with changed arguments, " +
		"which Signoff cannot hand to this host. Call the tool again with exactly these arguments if they still serve the task: " + edit
	return &out
}
