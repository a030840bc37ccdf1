package approverbot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"unicode"

	"github.com/signoff-dev/signoff/internal/approverbot/card"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Approve with changes (docs/PROTOCOL.md "Approve with changes"): an
// approver edits the call's arguments and approves the edited call. The
// core says what an editor starts from ([DraftOf]), turns what the person
// typed into the arguments the brokers get ([ParseEdit]) and checks that
// the question offers it ([EditOffered]); channels only lay the editor out.
// The brokers judge the edited call with the policy again: a deny there
// refuses the answer and the question stays open.

// editLineLimit bounds the edited arguments quoted in an outcome line.
const editLineLimit = 200

// Draft is what an editor starts from.
type Draft struct {
	// Shell is set for a shell call: Text is its command line, and the
	// other arguments (a description, a timeout) are kept as they are.
	// Otherwise Text is the arguments as indented JSON.
	Shell bool
	Text  string
}

// TooLong reports whether the draft is longer than any edit may be: a
// channel offers no editor for it (the change could never be sent).
func (d Draft) TooLong() bool { return len(d.Text) > messages.MaxUpdatedArgumentsBytes }

// WhyTooLong is why a call too long to edit offers no editor.
const WhyTooLong = "approve with changes is not offered: the call is longer than the 32 KiB a change may carry"

// shellKeys are the arguments a shell draft keeps as they are besides the
// command: the card shows them, and they change nothing of what runs.
// Arguments with any other key are edited as a whole JSON object, every key
// in the editor: approve with changes replaces the whole object the
// approver saw, so no key the editor hid can ride along.
var shellKeys = map[string]bool{"command": true, "description": true, "timeout": true}

// DraftOf is the draft of q's call: the command of a call the brokers
// judged as a shell call (Risk.Shell) whose arguments hold nothing but a
// description and a timeout besides, else all its arguments as JSON (a
// "command" of another tool is an argument like the others: red team AG
// F1).
func DraftOf(q Question) Draft {
	args := q.Request.Arguments
	if m, ok := argumentObject(args); ok && q.Risk.Shell && shellOnly(args) {
		var cmd string
		if raw, has := m["command"]; has && json.Unmarshal(raw, &cmd) == nil {
			return Draft{Shell: true, Text: cmd}
		}
	}
	if len(bytes.TrimSpace(args)) == 0 {
		return Draft{Text: "{}"}
	}
	var out bytes.Buffer
	if json.Indent(&out, args, "", "  ") != nil {
		return Draft{Text: string(args)}
	}
	return Draft{Text: out.String()}
}

// ErrEdit: what the person typed is not an edit the brokers can take;
// nothing was sent. Its text says what is wrong and where.
var ErrEdit = errors.New("edit refused")

// ParseEdit turns the text of an editor on q into the arguments of the
// edited call: for a shell draft, the command, with the call's description
// and timeout kept (see shellKeys; a shell draft of a call with any other
// key is refused); otherwise the text itself, which must be one JSON
// object and replaces the whole of the call's arguments. The result is
// compact JSON within [messages.MaxUpdatedArgumentsBytes].
func ParseEdit(q Question, d Draft, text string) (json.RawMessage, error) {
	var out json.RawMessage
	if d.Shell {
		// Line ends as a text field on Windows sends them.
		cmd := strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
		if cmd == "" {
			return nil, fmt.Errorf("%w: the command is empty; reject the call instead", ErrEdit)
		}
		if i := strings.IndexFunc(cmd, badCommandRune); i >= 0 {
			return nil, fmt.Errorf("%w: the command holds a control character (%s) at byte %d", ErrEdit, runeName(cmd, i), i)
		}
		if i := escapedInEditor(cmd); i >= 0 {
			return nil, fmt.Errorf("%w: the command holds a character the card would show escaped, as <U+…> (%s) at byte %d", ErrEdit, runeName(cmd, i), i)
		}
		if !shellOnly(q.Request.Arguments) {
			// The editor showed the command only, and the call holds
			// more: edit its arguments as JSON, every key in view.
			return nil, fmt.Errorf("%w: the call has arguments besides its command; edit all of them as JSON", ErrEdit)
		}
		m, ok := argumentObject(q.Request.Arguments)
		if !ok {
			m = map[string]json.RawMessage{}
		}
		for k := range m {
			if !shellKeys[k] {
				delete(m, k)
			}
		}
		c, _ := json.Marshal(cmd)
		m["command"] = c
		data, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrEdit, err)
		}
		out = data
	} else {
		if t := strings.ReplaceAll(text, "\r\n", "\n"); escapedInEditor(t) >= 0 {
			i := escapedInEditor(t)
			return nil, fmt.Errorf("%w: the arguments hold a character the card would show escaped, as <U+…> (%s) at byte %d", ErrEdit, runeName(t, i), i)
		}
		obj, err := parseObject(text)
		if err != nil {
			return nil, err
		}
		if DraftOf(q).Shell {
			// A shell call edited as JSON (the webhook) keeps a command.
			var m struct {
				Command *string `json:"command"`
			}
			if json.Unmarshal(obj, &m) != nil || m.Command == nil || strings.TrimSpace(*m.Command) == "" {
				return nil, fmt.Errorf("%w: the command is empty or missing (a shell call's arguments need a \"command\" string); reject the call instead", ErrEdit)
			}
		}
		out = obj
	}
	if len(out) > messages.MaxUpdatedArgumentsBytes {
		return nil, fmt.Errorf("%w: the edited arguments are %d bytes, more than the %d a change may carry", ErrEdit, len(out), messages.MaxUpdatedArgumentsBytes)
	}
	return out, nil
}

// parseObject reads text as exactly one JSON object and returns it compact.
func parseObject(text string) (json.RawMessage, error) {
	trimmed := strings.TrimSpace(text)
	if !strings.HasPrefix(trimmed, "{") {
		return nil, fmt.Errorf("%w: the arguments must be a JSON object ({…})", ErrEdit)
	}
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: the arguments are not valid JSON: %s", ErrEdit, jsonErrorAt(trimmed, err))
	}
	if dec.More() || dec.InputOffset() != int64(len(trimmed)) {
		return nil, fmt.Errorf("%w: the arguments hold more than one JSON value (extra text after byte %d)", ErrEdit, dec.InputOffset())
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(trimmed)); err != nil {
		return nil, fmt.Errorf("%w: the arguments are not valid JSON: %v", ErrEdit, err)
	}
	return buf.Bytes(), nil
}

// jsonErrorAt says where a JSON syntax error is: line and column.
func jsonErrorAt(text string, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err.Error()
	}
	off := int(se.Offset)
	if off > len(text) {
		off = len(text)
	}
	line := 1 + strings.Count(text[:off], "\n")
	col := off - strings.LastIndex(text[:off], "\n")
	return se.Error() + " (line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col) + ")"
}

// badCommandRune reports control characters a command line may not hold:
// all but tab and newline (a script may span lines).
func badCommandRune(r rune) bool {
	return r != '\t' && r != '\n' && (unicode.IsControl(r) || r == '\u2028' || r == '\u2029')
}

func runeName(s string, i int) string {
	for _, r := range s[i:] {
		return fmt.Sprintf("U+%04X", r)
	}
	return "?"
}

// shellOnly reports whether args is an object of the keys a shell draft
// keeps, each once: an empty or non-object args has none to hide.
func shellOnly(args json.RawMessage) bool {
	keys := card.ArgKeys(args)
	seen := map[string]bool{}
	for _, k := range keys {
		if !shellKeys[k] || seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// argumentObject decodes args as an object keeping each value's JSON.
func argumentObject(args json.RawMessage) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// WhyNoEdit is why a question that needs several approvals offers no
// editing: the approvals counted approve the call they were shown.
const WhyNoEdit = "approve with changes is not offered on a question that needs several approvals (the approvals counted approve the call as shown); reject it with feedback instead"

// WhyNoEditAsk is why an ask-user question offers no editing: its
// approval carries the approver's answer, which stands for the tool's
// output; an edited call would change the questions the answer answers.
const WhyNoEditAsk = "approve with changes is not offered on an ask-user question: answer it instead"

// WhyNoEditHidden is why a call holding characters the card escapes
// offers no editing: an editor shows them raw (invisible, reordering the
// text, striking it through, drawn as the font pleases), so the approver
// could not see what they approve.
const WhyNoEditHidden = "approve with changes is not offered: the call holds characters an editor would show raw and the card shows as <U+…> (bidi, invisible or control characters, combining marks drawn over others, characters with no standard look); reject it with feedback instead"

// EditOffered reports whether q offers approver to approve it with
// changes, and if not, why (wrapping [ErrChoice]).
func EditOffered(q Question, approver string) error {
	switch {
	case approver != "" && q.Request.RequestedBy == approver:
		return fmt.Errorf("%w: %s", ErrChoice, WhyNotMine)
	case q.AskUser != nil:
		return fmt.Errorf("%w: %s", ErrChoice, WhyNoEditAsk)
	case q.Approvals() > 1:
		return fmt.Errorf("%w: %s", ErrChoice, WhyNoEdit)
	case escapedInEditor(DraftOf(q).Text) >= 0:
		return fmt.Errorf("%w: %s", ErrChoice, WhyNoEditHidden)
	}
	return nil
}

// escapedInEditor is the byte offset of the first character of an
// editor's text that the card shows escaped, or -1: the gate is the card's
// own classification ([card.Escaped]), every kind of it — not a list of its
// own, which missed the combining marks drawn over others (red team AP
// F3) — so what the card escapes, no editor shows raw.
func escapedInEditor(text string) int { return card.Escaped(text, true) }

// ChooseEdited is [Choose] for an approval with changes: c must approve,
// q must offer editing, and edited (from [ParseEdit]) become the answer's
// UpdatedArguments.
func ChooseEdited(q Question, c Choice, approver, channel, device, feedback string, edited json.RawMessage) (Answer, error) {
	a, err := Choose(q, c, approver, channel, device, feedback)
	if err != nil {
		return Answer{}, err
	}
	if err := checkEdit(q, a.Approved, approver, string(edited)); err != nil {
		return Answer{}, err
	}
	a.UpdatedArguments = string(edited)
	return a, nil
}

// checkEdit is the core's rule for an answer carrying edited arguments.
func checkEdit(q Question, approved bool, approver string, edited string) error {
	if len(edited) == 0 {
		return nil
	}
	if !approved {
		return fmt.Errorf("%w: changes go with an approval only", ErrChoice)
	}
	if q.AskUser != nil {
		return fmt.Errorf("%w: %s", ErrChoice, WhyNoEditAsk)
	}
	if q.Open() {
		return EditOffered(q, approver)
	}
	return nil
}

// SubmitEdited is [Submit] for an approval with changes: the text typed
// in an editor opened on draft d is parsed ([ParseEdit]) and sent with
// choice c. A text that is no valid edit is not sent: Submission.Text says
// what is wrong and Applied is false.
func SubmitEdited(ctx context.Context, r Responder, log *slog.Logger, q Question, c Choice, d Draft, text, approver, channel, device, feedback string) Submission {
	edited, err := ParseEdit(q, d, text)
	if err == nil {
		var a Answer
		if a, err = ChooseEdited(q, c, approver, channel, device, feedback, edited); err == nil {
			return send(ctx, r, log, q, a)
		}
	}
	log.Warn("edited answer refused", "request_id", q.Request.RequestID, "approver", approver, "err", err)
	return Submission{Text: NotSentText(err)}
}
