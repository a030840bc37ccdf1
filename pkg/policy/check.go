package policy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// MaxCheckLine is the longest input line [RunCheck] accepts: the broker's
// default message limit with a NATS server of default max_payload (1 MiB;
// the broker takes half of it), so that a request the broker would refuse
// as too large is refused here too, not decided.
const MaxCheckLine = 512 << 10

// checkInput is the part of a request (DESIGN §3) that the policy reads;
// the other request fields are accepted and ignored, unknown fields are
// reported (a misspelt "argument" would otherwise be judged as no
// arguments).
type checkInput struct {
	Tool      *string         `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	AgentType string          `json:"agent_type"`
	Cwd       string          `json:"cwd"`
	Home      string          `json:"home"`

	V              json.RawMessage `json:"v"`
	RequestID      json.RawMessage `json:"request_id"`
	SessionID      json.RawMessage `json:"session_id"`
	AgentID        json.RawMessage `json:"agent_id"`
	RequestedBy    json.RawMessage `json:"requested_by"`
	CallID         json.RawMessage `json:"call_id"`
	Category       json.RawMessage `json:"category"`
	Description    json.RawMessage `json:"description"`
	BatchRemaining json.RawMessage `json:"batch_remaining"`
	TTLMillis      json.RawMessage `json:"ttl_ms"`
}

// checkOutput is one output line of RunCheck.
type checkOutput struct {
	Line              int    `json:"line"`
	Tool              string `json:"tool,omitempty"`
	Action            Action `json:"action,omitempty"`
	Tier              Tier   `json:"tier,omitempty"`
	Reason            string `json:"reason,omitempty"`
	Rule              string `json:"rule,omitempty"`
	Layer             string `json:"layer,omitempty"`
	SafetyOverride    string `json:"safety_override,omitempty"`
	Route             string `json:"route,omitempty"`
	ApprovalsRequired int    `json:"approvals_required,omitempty"`
	TTL               string `json:"ttl,omitempty"`
	Grantable         bool   `json:"grantable,omitempty"`
	// StepUp is set when approving the question needs a second factor.
	StepUp      *messages.StepUpNeed `json:"step_up,omitempty"`
	Subcommands []checkSubcommand    `json:"subcommands,omitempty"`
	Always      []string             `json:"always,omitempty"`
	// Escalation is the ladder of a question this call asks (the rule's,
	// else its team's).
	Escalation []messages.EscalationStep `json:"escalation,omitempty"`
	Error      string                    `json:"error,omitempty"`
}

type checkSubcommand struct {
	Command string   `json:"command"`
	Words   []string `json:"words,omitempty"`
	Kind    string   `json:"kind"`
	Action  Action   `json:"action"`
	Rule    string   `json:"rule,omitempty"`
	Reason  string   `json:"reason"`
}

// RunCheck evaluates tool calls offline, as `broker policy check` does. It
// reads one JSON request per line from in (DESIGN §3 shape; only tool is
// required, arguments must be an object when present, agent_type selects
// the agent layer; blank lines are skipped) and writes one JSON object per
// input line to out:
//
//	{"line":N,"tool":…,"action":…,"tier":…,"reason":…,"rule":…,"layer":…,
//	 "safety_override":…,"route":…,"approvals_required":…,"ttl":…,
//	 "grantable":…,"subcommands":[{"command","words","kind","action","rule","reason"}],
//	 "always":[…]}
//
// Empty fields are left out. A line that cannot be read becomes
// {"line":N,"error":"…"} and the run goes on; RunCheck then returns an error
// wrapping [ErrInvalidLines]. mode, when not empty, replaces the policy's
// mode for every call (like an admin's mode override). Lines may be up to
// [MaxCheckLine] bytes (64 KiB, the broker's limit) and must be UTF-8.
func RunCheck(in io.Reader, out io.Writer, p *Policy, mode Mode) error {
	if mode != "" {
		if _, err := ParseMode(string(mode)); err != nil {
			return err
		}
	}
	r := bufio.NewReaderSize(in, 64<<10)
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	bad, total := 0, 0
	for n := 1; ; n++ {
		line, tooLong, err := readLine(r, MaxCheckLine)
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			bw.Flush()
			return fmt.Errorf("policy check: read line %d: %w", n, err)
		}
		if tooLong || len(bytes.TrimSpace(line)) > 0 {
			o := checkOutput{Line: n, Error: fmt.Sprintf("line is longer than %d bytes, the broker's message limit", MaxCheckLine)}
			if !tooLong {
				o = checkLine(n, line, p, mode)
			}
			total++
			if o.Error != "" {
				bad++
			}
			if err := enc.Encode(&o); err != nil {
				return fmt.Errorf("policy check: write: %w", err)
			}
		}
		if eof {
			break
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("policy check: write: %w", err)
	}
	if bad > 0 {
		return fmt.Errorf("%w: %d of %d", ErrInvalidLines, bad, total)
	}
	return nil
}

// readLine reads one line without its newline. A line longer than max is
// consumed to its end and reported with tooLong.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the newline itself
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, tooLong, err
	}
}

func checkLine(n int, line []byte, p *Policy, mode Mode) checkOutput {
	if !utf8.Valid(line) {
		// The broker refuses such a message before any decision.
		return checkOutput{Line: n, Error: "invalid request: not valid UTF-8"}
	}
	var in checkInput
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return checkOutput{Line: n, Error: "invalid request: " + err.Error()}
	}
	if dec.More() {
		return checkOutput{Line: n, Error: "invalid request: more than one JSON value on the line"}
	}
	if in.Tool == nil || *in.Tool == "" {
		return checkOutput{Line: n, Error: "invalid request: missing tool"}
	}
	if a := bytes.TrimSpace(in.Arguments); len(a) > 0 && a[0] != '{' && string(a) != "null" {
		return checkOutput{Line: n, Error: "invalid request: arguments must be a JSON object"}
	}
	if in.Cwd != "" && (!path.IsAbs(in.Cwd) || path.Clean(in.Cwd) != in.Cwd) {
		return checkOutput{Line: n, Error: "invalid request: cwd must be an absolute, clean path, got " + strconv.Quote(in.Cwd)}
	}
	if in.Home != "" && !usableHome(in.Home) {
		return checkOutput{Line: n, Error: "invalid request: home must be an absolute, clean path other than / without glob characters, got " + strconv.Quote(in.Home)}
	}
	d := p.Evaluate(Call{Tool: *in.Tool, Arguments: in.Arguments, AgentType: in.AgentType, Cwd: in.Cwd, Home: in.Home, Mode: mode})
	o := checkOutput{
		Line:              n,
		Tool:              *in.Tool,
		Action:            d.Action,
		Tier:              d.Tier,
		Reason:            d.Reason,
		Rule:              d.Rule,
		Layer:             d.Layer,
		SafetyOverride:    d.SafetyOverride,
		Route:             d.Route,
		ApprovalsRequired: d.ApprovalsRequired,
		Grantable:         d.Grantable,
		Always:            d.Always,
		StepUp:            p.StepUp(&d),
	}
	if d.TTL > 0 {
		o.TTL = d.TTL.String()
	}
	if d.Action == Ask {
		team := d.Route
		if team == "" {
			team = "default"
		}
		o.Escalation = p.Escalation(&d, team)
	}
	for _, s := range d.Subcommands {
		o.Subcommands = append(o.Subcommands, checkSubcommand{
			Command: s.Command, Words: s.Words, Kind: s.Kind, Action: s.Action, Rule: s.Rule, Reason: s.Reason,
		})
	}
	return o
}
