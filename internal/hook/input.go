package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// maxInputBytes bounds the hook input read from stdin. Larger inputs are
// refused (and the call denied): the broker's own message limit is far
// smaller.
const maxInputBytes = 8 << 20

// Input is the JSON a host writes on the hook's stdin. Fields are the union
// of Claude Code's and Codex's (docs/AGENTS.md lists them per host); fields
// the hook does not use are ignored.
type Input struct {
	HookEventName  string          `json:"hook_event_name"`
	SessionID      string          `json:"session_id"`
	TranscriptPath *string         `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	// AgentID and AgentType are set by Claude Code inside subagents.
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
	// TurnID is Codex's turn id.
	TurnID string `json:"turn_id"`
	// Reason is SessionEnd's reason (clear, logout, prompt_input_exit…).
	Reason string `json:"reason"`
}

// errInput marks input the hook cannot use.
var errInput = errors.New("invalid hook input")

// ReadInput decodes one hook event from r.
func ReadInput(r io.Reader) (Input, error) {
	var in Input
	data, err := io.ReadAll(io.LimitReader(r, maxInputBytes+1))
	if err != nil {
		return in, fmt.Errorf("%w: reading stdin: %v", errInput, err)
	}
	if len(data) > maxInputBytes {
		return in, fmt.Errorf("%w: more than %d bytes on stdin", errInput, maxInputBytes)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return in, fmt.Errorf("%w: stdin is empty (the host sends the event as JSON)", errInput)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&in); err != nil {
		return in, fmt.Errorf("%w: not a JSON object: %v", errInput, err)
	}
	if dec.More() {
		return in, fmt.Errorf("%w: more than one JSON value on stdin", errInput)
	}
	if in.HookEventName == "" {
		return in, fmt.Errorf("%w: hook_event_name is missing", errInput)
	}
	return in, nil
}

// checkToolCall checks what a gated event needs besides a session: a tool
// and an object of arguments.
func (in *Input) checkToolCall() error {
	if in.ToolName == "" {
		return fmt.Errorf("%w: tool_name is missing", errInput)
	}
	if in.Cwd != "" && in.cwd() == "" {
		// Without it the call's relative paths would be judged by their
		// text alone, blind to every rule anchored at the home (cat
		// ../../.kube/config after a cd into a directory whose name holds
		// a control character: red team AW F4): no call runs there.
		return fmt.Errorf("%w: the working directory %q cannot be judged (not an absolute path the protocol accepts: a control character, or too long); move to another directory", errInput, in.Cwd)
	}
	args := bytes.TrimSpace(in.ToolInput)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		in.ToolInput = json.RawMessage(`{}`)
		return nil
	}
	if args[0] != '{' {
		return fmt.Errorf("%w: tool_input must be a JSON object", errInput)
	}
	return nil
}

// cwd returns the input's working directory, cleaned, when the protocol
// accepts it, else "" (a tool call then fails closed: checkToolCall).
func (in *Input) cwd() string {
	if in.Cwd == "" || !path.IsAbs(in.Cwd) {
		return ""
	}
	c := path.Clean(in.Cwd)
	r := messages.Request{V: messages.Version, RequestID: "x", SessionID: "x", AgentID: "x", Tool: "x", Cwd: c}
	if r.Validate() != nil {
		return ""
	}
	return c
}

// description is the human text a tool's input carries for approvers
// (Claude Code's Bash "description", Codex's justification), if any.
func (in *Input) description() string {
	var d struct {
		Description string `json:"description"`
	}
	if json.Unmarshal(in.ToolInput, &d) != nil {
		return ""
	}
	return d.Description
}
