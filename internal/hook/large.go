package hook

import (
	"crypto/sha256"
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
		summary, _ := json.Marshal(fmt.Sprintf("[Signoff: %d bytes not sent (%s); SHA-256 %x; the first %d bytes follow]\n%s",
			len(text), why, sha256.Sum256([]byte(text)), len(head), head))
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

// summarisedEdit is the deny that answers an approval with changes of a
// summarised call: the changed arguments hold the summary, not the
// content, and must not be written.
func summarisedEdit(d *messages.Decision) *messages.Decision {
	out := *d
	out.Outcome = messages.OutcomeDeny
	out.UpdatedArguments = nil
	out.Reason = "approved with changes, but the call was sent to Signoff with its content summarised (too large), so the changes cannot be applied; the original call was not run"
	out.LLMMessage = "Tool " + quoteName(d.Tool) + " was not run: an approver changed it, but Signoff saw only a summary of its content (the call is too large), so the change cannot be applied. Make the change in smaller calls."
	return &out
}

// tooLarge is the error of a call over the limit that cannot be shortened.
func tooLarge(tool string, size int, err error) error {
	return fmt.Errorf("the %s call is about %d bytes, over the largest request Signoff takes (%s): %v; split it, or raise the limit",
		tool, size, limitSetting, strings.TrimPrefix(err.Error(), "client: "))
}
