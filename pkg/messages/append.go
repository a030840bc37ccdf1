package messages

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"
)

// The AppendJSON methods encode the messages a broker writes on every
// automatic decision (the receipt, the decision, the audit record) without
// reflection. Each appends exactly the bytes json.Marshal produces for the
// same value — field order, omitempty, HTML-safe string escaping, compacted
// raw JSON, RFC 3339 times — which TestAppendJSONMatchesMarshal and
// FuzzAppendJSON check against encoding/json. A value json.Marshal would
// refuse (raw JSON that is not valid, a time outside years 0–9999) makes
// them return an error.

// AppendJSON appends r's JSON encoding to b.
func (r *Receipt) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(r.V), 10)
	b = appendKeyString(b, `,"request_id":`, r.RequestID)
	b = appendKeyString(b, `,"state":`, string(r.State))
	var err error
	if r.Decision != nil {
		b = append(b, `,"decision":`...)
		if b, err = r.Decision.AppendJSON(b); err != nil {
			return b, err
		}
	}
	if !r.ExpiresAt.IsZero() {
		b = append(b, `,"expires_at":`...)
		if b, err = appendTime(b, r.ExpiresAt); err != nil {
			return b, err
		}
	}
	b = appendOptString(b, `,"identity":`, string(r.Identity))
	return append(b, '}'), nil
}

// AppendJSON appends d's JSON encoding to b.
func (d *Decision) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(d.V), 10)
	b = appendKeyString(b, `,"request_id":`, d.RequestID)
	b = appendKeyString(b, `,"session_id":`, d.SessionID)
	b = appendOptString(b, `,"tool":`, d.Tool)
	b = appendKeyString(b, `,"outcome":`, string(d.Outcome))
	b = appendKeyString(b, `,"reason_code":`, string(d.ReasonCode))
	b = appendOptString(b, `,"reason":`, d.Reason)
	b = appendOptString(b, `,"scope":`, string(d.Scope))
	b = appendOptStrings(b, `,"granted_pattern":`, d.GrantedPattern)
	b = appendOptString(b, `,"reject_mode":`, string(d.RejectMode))
	b = appendOptStrings(b, `,"stop_rejections":`, d.StopRejections)
	b = appendOptString(b, `,"feedback":`, d.Feedback)
	b = appendOptString(b, `,"llm_message":`, d.LLMMessage)
	var err error
	if len(d.Answer) > 0 {
		b = append(b, `,"answer":`...)
		if b, err = appendRaw(b, d.Answer); err != nil {
			return b, err
		}
	}
	if len(d.UpdatedArguments) > 0 {
		b = append(b, `,"updated_arguments":`...)
		if b, err = appendRaw(b, d.UpdatedArguments); err != nil {
			return b, err
		}
	}
	b = appendKeyString(b, `,"decided_by":{"kind":`, string(d.DecidedBy.Kind))
	b = appendOptString(b, `,"id":`, d.DecidedBy.ID)
	b = appendOptString(b, `,"display":`, d.DecidedBy.Display)
	b = appendOptString(b, `,"channel":`, d.DecidedBy.Channel)
	b = appendOptString(b, `,"device":`, d.DecidedBy.Device)
	if d.DecidedBy.StepUp != nil {
		// Rare (approvals that needed a step-up): the slow path.
		su, err := json.Marshal(d.DecidedBy.StepUp)
		if err != nil {
			return b, err
		}
		b = append(b, `,"step_up":`...)
		b = append(b, su...)
	}
	b = append(b, `},"decided_at":`...)
	if b, err = appendTime(b, d.DecidedAt); err != nil {
		return b, err
	}
	b = appendOptString(b, `,"policy_version":`, d.PolicyVersion)
	return append(b, '}'), nil
}

// AppendJSON appends r's JSON encoding to b.
func (r *Request) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(r.V), 10)
	b = appendKeyString(b, `,"request_id":`, r.RequestID)
	b = appendKeyString(b, `,"session_id":`, r.SessionID)
	b = appendKeyString(b, `,"agent_id":`, r.AgentID)
	b = appendOptString(b, `,"agent_type":`, r.AgentType)
	b = appendOptString(b, `,"requested_by":`, r.RequestedBy)
	b = appendOptString(b, `,"call_id":`, r.CallID)
	b = appendKeyString(b, `,"tool":`, r.Tool)
	b = appendOptString(b, `,"category":`, string(r.Category))
	var err error
	if len(r.Arguments) > 0 {
		b = append(b, `,"arguments":`...)
		if b, err = appendRaw(b, r.Arguments); err != nil {
			return b, err
		}
	}
	b = appendOptString(b, `,"description":`, r.Description)
	b = appendOptString(b, `,"cwd":`, r.Cwd)
	b = appendOptString(b, `,"home":`, r.Home)
	if len(r.BatchRemaining) > 0 {
		b = append(b, `,"batch_remaining":[`...)
		for i := range r.BatchRemaining {
			it := &r.BatchRemaining[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = appendKeyString(b, `{"tool":`, it.Tool)
			if len(it.Arguments) > 0 {
				b = append(b, `,"arguments":`...)
				if b, err = appendRaw(b, it.Arguments); err != nil {
					return b, err
				}
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if r.TTLMillis != 0 {
		b = append(b, `,"ttl_ms":`...)
		b = strconv.AppendInt(b, r.TTLMillis, 10)
	}
	b = appendOptString(b, `,"identity":`, string(r.Identity))
	return append(b, '}'), nil
}

// AppendJSON appends a's JSON encoding to b.
func (a *AuditRecord) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(a.V), 10)
	b = append(b, `,"request":`...)
	var err error
	if b, err = a.Request.AppendJSON(b); err != nil {
		return b, err
	}
	b = append(b, `,"decision":`...)
	if b, err = a.Decision.AppendJSON(b); err != nil {
		return b, err
	}
	if a.Risk != nil {
		b = append(b, `,"risk":`...)
		b = a.Risk.appendJSON(b)
	}
	b = appendOptString(b, `,"replica":`, a.Replica)
	b = append(b, `,"recorded":`...)
	if b, err = appendTime(b, a.Recorded); err != nil {
		return b, err
	}
	if len(a.Escalation) > 0 {
		b = append(b, `,"escalation":[`...)
		for i, s := range a.Escalation {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"step":`...)
			b = strconv.AppendInt(b, int64(s.Step), 10)
			b = append(b, `,"after_ms":`...)
			b = strconv.AppendInt(b, s.AfterMS, 10)
			if s.Remind {
				b = append(b, `,"remind":true`...)
			}
			b = appendOptString(b, `,"add_team":`, s.AddTeam)
			b = appendOptString(b, `,"page":`, s.Page)
			b = append(b, `,"at":`...)
			if b, err = appendTime(b, s.At); err != nil {
				return b, err
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendOptString(b, `,"mode":`, a.Mode)
	if s := a.Shadow; s != nil {
		b = appendKeyString(b, `,"shadow":{"policy_version":`, s.PolicyVersion)
		b = appendKeyString(b, `,"action":`, s.Action)
		b = appendKeyString(b, `,"live":`, s.Live)
		b = appendOptString(b, `,"rule":`, s.Rule)
		b = append(b, '}')
	}
	if c := a.Canary; c != nil {
		b = appendKeyString(b, `,"canary":{"id":`, c.ID)
		b = appendKeyString(b, `,"policy_version":`, c.PolicyVersion)
		b = append(b, '}')
	}
	if c := a.Clipped; c != nil {
		b = append(b, `,"clipped":{"record_bytes":`...)
		b = strconv.AppendInt(b, int64(c.RecordBytes), 10)
		b = append(b, `,"arguments_bytes":`...)
		b = strconv.AppendInt(b, int64(c.ArgumentsBytes), 10)
		b = appendKeyString(b, `,"arguments_sha256":`, c.ArgumentsSHA256)
		if len(c.Arguments) > 0 {
			b = append(b, `,"arguments":"`...)
			b = base64.StdEncoding.AppendEncode(b, c.Arguments)
			b = append(b, '"')
		}
		if c.UpdatedBytes != 0 {
			b = append(b, `,"updated_bytes":`...)
			b = strconv.AppendInt(b, int64(c.UpdatedBytes), 10)
		}
		b = appendOptString(b, `,"updated_sha256":`, c.UpdatedSHA256)
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

func (r *Risk) appendJSON(b []byte) []byte {
	b = appendKeyString(b, `{"tier":`, r.Tier)
	b = appendOptString(b, `,"rule":`, r.Rule)
	b = appendOptString(b, `,"reason":`, r.Reason)
	b = appendOptString(b, `,"safety_override":`, r.SafetyOverride)
	if len(r.Subcommands) > 0 {
		b = append(b, `,"subcommands":[`...)
		for i := range r.Subcommands {
			v := &r.Subcommands[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = appendKeyString(b, `{"command":`, v.Command)
			b = appendOptStrings(b, `,"words":`, v.Words)
			b = appendOptString(b, `,"kind":`, v.Kind)
			b = appendKeyString(b, `,"action":`, v.Action)
			b = appendOptString(b, `,"rule":`, v.Rule)
			b = appendOptString(b, `,"reason":`, v.Reason)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if r.Shell {
		b = append(b, `,"shell":true`...)
	}
	return append(b, '}')
}

// appendKeyString appends key (the JSON before a value: `,"tool":`) and s
// as a JSON string.
func appendKeyString(b []byte, key, s string) []byte {
	return appendString(append(b, key...), s)
}

// appendOptString is appendKeyString, or nothing when s is empty
// (omitempty).
func appendOptString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendKeyString(b, key, s)
}

func appendOptStrings(b []byte, key string, ss []string) []byte {
	if len(ss) == 0 {
		return b
	}
	b = append(b, key...)
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendTime writes t as time.Time.MarshalJSON does: UTC times (what the
// broker writes) directly, others through MarshalJSON itself.
func appendTime(b []byte, t time.Time) ([]byte, error) {
	if y := t.Year(); t.Location() == time.UTC && y >= 0 && y <= 9999 {
		b = append(b, '"')
		b = t.AppendFormat(b, time.RFC3339Nano)
		return append(b, '"'), nil
	}
	j, err := t.MarshalJSON()
	if err != nil {
		return b, err
	}
	return append(b, j...), nil
}

// errInvalidRaw refuses what json.Marshal refuses in a json.RawMessage.
var errInvalidRaw = errors.New("messages: a raw JSON field is not valid JSON")

// appendRaw writes raw JSON as encoding/json writes a json.RawMessage: checked,
// compacted, with <, >, &, U+2028 and U+2029 escaped. Already compact and
// HTML-safe JSON (what agents send) is copied as it is.
func appendRaw(b []byte, raw json.RawMessage) ([]byte, error) {
	if !json.Valid(raw) {
		return b, errInvalidRaw
	}
	if rawIsCompactAndSafe(raw) {
		return append(b, raw...), nil
	}
	var compact, escaped bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return b, err
	}
	json.HTMLEscape(&escaped, compact.Bytes())
	return append(b, escaped.Bytes()...), nil
}

// rawIsCompactAndSafe reports whether valid JSON has no whitespace outside
// strings and nothing encoding/json would escape.
func rawIsCompactAndSafe(raw []byte) bool {
	inString, escaped := false, false
	for i, c := range raw {
		switch {
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xA8 || raw[i+2] == 0xA9):
			return false // U+2028, U+2029
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string the way encoding/json does with
// HTML escaping on: ", \ and control characters escaped (\b \f \n \r \t
// short), <, > and & as \u003c \u003e \u0026, invalid UTF-8 as \ufffd,
// U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
