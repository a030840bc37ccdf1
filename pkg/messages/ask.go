package messages

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// AskUser marks a question whose tool asks the human something (an
// ask-user class tool: Claude Code's AskUserQuestion, or any tool the
// policy declares under tools.answer). An approver answers it by approving
// with an `answer`, which the agent reads as the tool's output instead of
// running it. Questions are the tool's questions as the broker read them
// from the arguments (empty when the arguments hold none it could read:
// then the answer is free text).
type AskUser struct {
	Questions []AskQuestion `json:"questions,omitempty"`
}

// AskQuestion is one question of an ask-user tool, in Claude Code's
// AskUserQuestion shape: the question, a short header, the options and
// whether several may be picked. A question always takes free text too
// (AskUserQuestion's "Other").
type AskQuestion struct {
	Question    string      `json:"question"`
	Header      string      `json:"header,omitempty"`
	Options     []AskOption `json:"options,omitempty"`
	MultiSelect bool        `json:"multi_select,omitempty"`
}

// AskOption is one option of a question.
type AskOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Bounds on what [ParseAskUser] keeps: a question is for a person to read.
const (
	MaxAskQuestions = 8
	MaxAskOptions   = 16
	maxAskText      = 1000
)

// ParseAskUser reads the questions of an ask-user tool's arguments. It
// knows Claude Code's AskUserQuestion (`questions: [{question, header,
// options: [{label, description}], multiSelect}]`) and the one-question
// shape of other agents (`question`, with `options` or `choices` as
// strings or `{label, description}`, and `multiSelect`/`multi_select`).
// Anything else gives no questions (a free-text answer). Texts are made one
// line and clipped; questions without text, options without a label and
// duplicate questions or labels are dropped, so that an answer keyed by
// question text and naming labels is never ambiguous.
func ParseAskUser(args json.RawMessage) AskUser {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return AskUser{}
	}
	var raw []json.RawMessage
	if json.Unmarshal(m["questions"], &raw) != nil || len(raw) == 0 {
		if _, ok := m["question"]; !ok {
			return AskUser{}
		}
		raw = []json.RawMessage{args}
	}
	var out AskUser
	seen := map[string]bool{}
	for _, r := range raw {
		if len(out.Questions) == MaxAskQuestions {
			break
		}
		q, ok := parseAskQuestion(r)
		if !ok || seen[q.Question] {
			continue
		}
		seen[q.Question] = true
		out.Questions = append(out.Questions, q)
	}
	return out
}

func parseAskQuestion(raw json.RawMessage) (AskQuestion, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return AskQuestion{}, false
	}
	q := AskQuestion{Question: askText(m["question"]), Header: askText(m["header"])}
	if q.Question == "" {
		return q, false
	}
	for _, k := range []string{"multiSelect", "multi_select"} {
		var b bool
		if json.Unmarshal(m[k], &b) == nil && b {
			q.MultiSelect = true
		}
	}
	opts := m["options"]
	if opts == nil {
		opts = m["choices"]
	}
	var items []json.RawMessage
	_ = json.Unmarshal(opts, &items)
	labels := map[string]bool{}
	for _, it := range items {
		if len(q.Options) == MaxAskOptions {
			break
		}
		var o AskOption
		if s := askText(it); s != "" {
			o.Label = s
		} else {
			var om map[string]json.RawMessage
			if json.Unmarshal(it, &om) != nil {
				continue
			}
			o.Label, o.Description = askText(om["label"]), askText(om["description"])
		}
		if o.Label == "" || labels[o.Label] {
			continue
		}
		labels[o.Label] = true
		q.Options = append(q.Options, o)
	}
	return q, true
}

// askText reads a JSON string as one clipped line ("" when it is not a
// string).
func askText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return r == '\n' || r == '\r' || r == '\t' || r == '\u2028' || r == '\u2029' || (r < 0x20 || r == 0x7f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
	}), " ")
	s = strings.TrimSpace(s)
	if len(s) > maxAskText {
		cut := maxAskText
		for cut > 0 && s[cut]&0xc0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// MaxAnswerBytes bounds an answer's JSON.
const MaxAnswerBytes = 16 << 10

// AnswerText is a free-text answer: a JSON string.
func AnswerText(s string) json.RawMessage {
	b, _ := json.Marshal(strings.TrimSpace(s))
	return b
}

// Answers builds the answer to a's questions from what was picked or typed
// per question text: the labels picked (several only for a multi-select
// question) and free text, joined with ", " as Claude Code's
// AskUserQuestion answers are. The result is the object `{question:
// answer}`; a question left empty is left out. With no questions the
// answer is the free text of the "" key, as a JSON string. The answer is
// checked with [AskUser.Check].
func (a AskUser) Answers(picked map[string][]string, text map[string]string) (json.RawMessage, error) {
	if len(a.Questions) == 0 {
		raw := AnswerText(text[""])
		return raw, a.Check(raw)
	}
	out := map[string]string{}
	for _, q := range a.Questions {
		parts := slices.Clone(picked[q.Question])
		if t := strings.TrimSpace(text[q.Question]); t != "" {
			parts = append(parts, t)
		}
		if len(parts) > 0 {
			out[q.Question] = strings.Join(parts, ", ")
		}
	}
	for k := range picked {
		if !a.has(k) {
			return nil, &FieldError{Field: "answer", Problem: "answers " + strconv.Quote(clipQuote(k)) + ", which is not one of the questions"}
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return raw, a.checkPicks(picked, raw)
}

func (a AskUser) checkPicks(picked map[string][]string, raw json.RawMessage) error {
	for _, q := range a.Questions {
		p := picked[q.Question]
		if len(p) > 1 && !q.MultiSelect {
			return &FieldError{Field: "answer", Problem: "question " + strconv.Quote(clipQuote(q.Question)) + " takes one option, got " + strconv.Itoa(len(p))}
		}
		for _, l := range p {
			if !slices.ContainsFunc(q.Options, func(o AskOption) bool { return o.Label == l }) {
				return &FieldError{Field: "answer", Problem: "option " + strconv.Quote(clipQuote(l)) + " is not offered by question " + strconv.Quote(clipQuote(q.Question))}
			}
		}
	}
	return a.Check(raw)
}

func (a AskUser) has(question string) bool {
	return slices.ContainsFunc(a.Questions, func(q AskQuestion) bool { return q.Question == question })
}

// Check reports whether raw is an answer to a: a non-empty JSON string (free
// text, for every question at once), or, when a has questions, an object
// whose keys are among the questions' texts and whose values are non-empty
// strings, at least one. Text
// follows the feedback rules (tab and newlines allowed, other control
// characters and bidi overrides not); the whole is at most
// [MaxAnswerBytes].
func (a AskUser) Check(raw json.RawMessage) error {
	if len(raw) > MaxAnswerBytes {
		return &FieldError{Field: "answer", Problem: "must be at most " + strconv.Itoa(MaxAnswerBytes) + " bytes, got " + strconv.Itoa(len(raw))}
	}
	isNull := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
	var s string
	if err := json.Unmarshal(raw, &s); (err == nil && !isNull) || len(a.Questions) == 0 {
		if err != nil || isNull {
			return &FieldError{Field: "answer", Problem: "must be a string (this tool's answer is free text)"}
		}
		if strings.TrimSpace(s) == "" {
			return &FieldError{Field: "answer", Problem: "is empty"}
		}
		return checkText("answer", s, MaxAnswerBytes)
	}
	var m map[string]json.RawMessage
	if isNull || json.Unmarshal(raw, &m) != nil {
		return &FieldError{Field: "answer", Problem: "must be a string or an object {question: answer} (this tool asks " + strconv.Itoa(len(a.Questions)) + " question(s))"}
	}
	if len(m) == 0 {
		return &FieldError{Field: "answer", Problem: "answers none of the questions"}
	}
	for k, v := range m {
		if !a.has(k) {
			return &FieldError{Field: "answer", Problem: "answers " + strconv.Quote(clipQuote(k)) + ", which is not one of the questions"}
		}
		var s string
		if json.Unmarshal(v, &s) != nil || strings.TrimSpace(s) == "" {
			return &FieldError{Field: "answer", Problem: "the answer to " + strconv.Quote(clipQuote(k)) + " must be a non-empty string"}
		}
		if err := checkText("answer", s, MaxAnswerBytes); err != nil {
			return err
		}
	}
	return nil
}

func clipQuote(s string) string {
	if len(s) <= 60 {
		return s
	}
	cut := 60
	for cut > 0 && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
