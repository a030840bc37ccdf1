package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// A call too large for one message is still decided when the hosts' file
// tools make it: the policy judges those by their path, so the hook sends
// the path as it is and, in place of each bulk argument (a file's content,
// an edit's strings), its size, SHA-256 and first bytes. Any other tool's
// arguments are what the policy judges (a shell command), so an oversized
// call of those is refused, naming the setting to raise.

// bulkArgs are the arguments of the hosts' file tools that carry content,
// not paths (Claude Code's Write, Edit, MultiEdit and NotebookEdit).
var bulkArgs = map[string][]string{
	"Write":        {"content"},
	"Edit":         {"old_string", "new_string"},
	"MultiEdit":    {"edits"},
	"NotebookEdit": {"new_source"},
}

// headBytes is how much of each summarised argument approvers see.
const headBytes = 2048

// requestOverhead bounds what a request adds to its arguments and
// description (ids, tool, cwd, field names).
const requestOverhead = 8 << 10

// limitSetting names the settings that bound a request, for messages.
const limitSetting = "the broker's --max-message-bytes (default: half the NATS server's max_payload)"

// summarise returns args with each bulk argument of tool replaced by a
// text giving its size, SHA-256 and head, and why; ok is false when the
// tool has none (its call cannot be shortened).
func summarise(tool string, args json.RawMessage, why string) (json.RawMessage, bool) {
	names := bulkArgs[tool]
	if len(names) == 0 {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return nil, false
	}
	changed := false
	for _, name := range names {
		raw, ok := m[name]
		if !ok {
			continue
		}
		var text string
		if json.Unmarshal(raw, &text) != nil {
			text = string(raw) // an array of edits: its JSON
		}
		if len(text) <= headBytes {
			continue
		}
		head := text[:headBytes]
		for !utf8.ValidString(head) && len(head) > 0 {
			head = head[:len(head)-1]
		}
		sum := sha256.Sum256([]byte(text))
		summary, _ := json.Marshal(messages.SummaryOf(len(text), why, hex.EncodeToString(sum[:]), len(head)) + head)
		m[name] = summary
		changed = true
	}
	if !changed {
		return nil, false
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	return out, true
}

// summarisedApproval is the deny that answers a person's approval of a
// summarised call: they saw its content's size, hash and first bytes, not
// the content the host would write, so their approval does not cover it
// (red team V2: 666 KB written into ~/.bashrc on an approval of its first
// 2 KB). An approval with changes is refused the same way: the changed
// arguments hold the summary, not the content. What the policy or a
// standing grant allows (by the call's path) stands: neither judged the
// content.
func summarisedApproval(d *messages.Decision) *messages.Decision {
	out := *d
	out.Outcome = messages.OutcomeDeny
	out.UpdatedArguments = nil
	if d.Edited() {
		out.Reason = "approved with changes, but the call was sent to Signoff with its content summarised (too large), so the changes cannot be applied; the original call was not run"
		out.LLMMessage = "Tool " + quoteName(d.Tool) + " was not run: an approver changed it, but Signoff saw only a summary of its content (the call is too large), so the change cannot be applied. Make the change in smaller calls."
		return &out
	}
	out.Reason = "approved by " + d.DecidedBy.ID + ", who saw only a summary of the call's content (too large to send whole); the call was not run"
	out.LLMMessage = "Tool " + quoteName(d.Tool) + " was not run: the approvers could see only the first bytes of its content (the call is too large to send to Signoff whole). Make the change in smaller calls."
	return &out
}

// tooLarge is the error of a call over the limit that cannot be shortened.
func tooLarge(tool string, size int, err error) error {
	return fmt.Errorf("the %s call is about %d bytes, over the largest request Signoff takes (%s): %v; split it, or raise the limit",
		tool, size, limitSetting, strings.TrimPrefix(err.Error(), "client: "))
}
