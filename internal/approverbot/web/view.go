package web

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Actions an approver can take on a card ("action" of POST /api/respond).
const (
	actionApprove    = "approve"
	actionSession    = "session"
	actionAlways     = "always"
	actionRejectSoft = "reject_soft"
	actionRejectHard = "reject_hard"
)

// maxShownArgs bounds the pretty-printed arguments a card shows; the rest is
// cut with a note (the agent may send up to the broker's message limit).
const maxShownArgs = 16 << 10

// QuestionView is one open question as GET /api/questions and the
// "question" event carry it: the broker's question unchanged, plus what the
// page derives from it for the viewer.
type QuestionView struct {
	RequestID string                  `json:"request_id"`
	Question  messages.ApprovalNeeded `json:"question"`
	// AlwaysGrants says what the Always answer would grant ("Always allow
	// `git push *` for agent pod-7"); empty when Always is not offered.
	AlwaysGrants string `json:"always_grants,omitempty"`
	// Actions are the actions POST /api/respond accepts for this question.
	Actions []string `json:"actions"`
	// Mine is set when the viewer is the human the agent works for: the
	// broker refuses their approval.
	Mine bool `json:"mine,omitempty"`
	// HTML is the card as the page renders it.
	HTML string `json:"html"`
}

// ResolvedView is a settled question as the "resolved" event carries it.
type ResolvedView struct {
	RequestID string            `json:"request_id"`
	Team      string            `json:"team"`
	State     messages.State    `json:"state"`
	Outcome   messages.Outcome  `json:"outcome,omitempty"`
	Decision  messages.Decision `json:"decision"`
	// Text says how and by whom, for people: "Approved (session) by Alice
	// via slack".
	Text string `json:"text"`
}

// cardData is what the card template renders.
type cardData struct {
	ID          string
	Tool        string
	Tier        string
	Team        string
	Agent       string
	Session     string
	RequestedBy string
	Description string
	// Command is the shell command when the arguments carry one.
	Command        string
	Args           string
	Rule           string
	Reason         string
	SafetyOverride string
	Subcommands    []verdictLine
	Batch          []batchLine
	ExpiresAt      string // RFC 3339, read by the page's countdown
	ExpiresText    string // the same in words, for the first paint
	Required       int
	SoFar          []string
	Always         *alwaysLine
	Mine           bool
}

type verdictLine struct {
	Command string
	Action  string // allow | ask | deny, also the CSS class
	Rule    string
	Reason  string
}

type batchLine struct {
	Tool string
	Args string
}

// alwaysLine is the Always grant in pieces, so the page can set patterns in
// code type.
type alwaysLine struct {
	Patterns []string // empty: the whole tool
	Tool     string
	Agent    string
}

func newCardData(q approverbot.Question, viewer string, now time.Time) cardData {
	r := q.Request
	d := cardData{
		ID:             r.RequestID,
		Tool:           r.Tool,
		Tier:           verdictClass(q.Risk.Tier, "exec"),
		Team:           q.Team,
		Agent:          r.AgentID,
		Session:        r.SessionID,
		RequestedBy:    r.RequestedBy,
		Description:    r.Description,
		Command:        commandOf(r.Arguments),
		Args:           prettyJSON(r.Arguments, maxShownArgs),
		Rule:           q.Risk.Rule,
		Reason:         q.Risk.Reason,
		SafetyOverride: q.Risk.SafetyOverride,
		Required:       max(q.ApprovalsRequired, 1),
		SoFar:          q.ApprovalsSoFar,
		Mine:           viewer != "" && r.RequestedBy == viewer,
	}
	if d.SafetyOverride != "" && strings.Contains(d.Reason, d.SafetyOverride) {
		// The reason only repeats the override, which the card shows
		// highlighted on its own.
		d.Reason = ""
	}
	if !q.ExpiresAt.IsZero() {
		d.ExpiresAt = q.ExpiresAt.UTC().Format(time.RFC3339Nano)
		d.ExpiresText = timeLeft(q.ExpiresAt.Sub(now))
	}
	for _, s := range q.Risk.Subcommands {
		v := verdictLine{Command: s.Command, Action: verdictClass(s.Action, "ask"), Rule: s.Rule, Reason: s.Reason}
		if v.Reason == q.Risk.Reason {
			// The card says it once, as why it asks.
			v.Reason, v.Rule = "", ""
		}
		d.Subcommands = append(d.Subcommands, v)
	}
	if d.Rule != "" && strings.Contains(d.Reason, d.Rule) {
		d.Rule = ""
	}
	batch := q.BatchRemaining
	if len(batch) == 0 {
		batch = r.BatchRemaining
	}
	for _, b := range batch {
		d.Batch = append(d.Batch, batchLine{Tool: b.Tool, Args: compactJSON(b.Arguments, 240)})
	}
	if q.Always != nil {
		d.Always = &alwaysLine{Patterns: q.Always.Patterns, Tool: q.Always.Tool, Agent: r.AgentID}
		if d.Always.Tool == "" {
			d.Always.Tool = r.Tool
		}
	}
	return d
}

// verdictClass maps a verdict or tier to the fixed set of names the style
// sheet knows, so that a hostile value cannot become an arbitrary class.
func verdictClass(v, fallback string) string {
	switch v {
	case "allow", "ask", "deny", "read", "write", "exec", "mcp":
		return v
	}
	return fallback
}

// actionsOf lists the actions a question offers.
func actionsOf(q messages.ApprovalNeeded) []string {
	if q.Always == nil {
		return []string{actionApprove, actionSession, actionRejectSoft, actionRejectHard}
	}
	return []string{actionApprove, actionSession, actionAlways, actionRejectSoft, actionRejectHard}
}

// alwaysText says what the Always answer would grant, in one line.
func alwaysText(q messages.ApprovalNeeded) string {
	if q.Always == nil {
		return ""
	}
	tool := q.Always.Tool
	if tool == "" {
		tool = q.Request.Tool
	}
	var b strings.Builder
	b.WriteString("Always allow ")
	if len(q.Always.Patterns) == 0 {
		b.WriteString("every `" + tool + "` call")
	} else {
		for i, p := range q.Always.Patterns {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("`" + p + "`")
		}
	}
	if q.Request.AgentID != "" {
		b.WriteString(" for agent " + q.Request.AgentID)
	}
	return b.String()
}

// commandOf returns the "command" string argument of a shell-like call.
func commandOf(args json.RawMessage) string {
	var v struct {
		Command json.RawMessage `json:"command"`
	}
	if json.Unmarshal(args, &v) != nil || len(v.Command) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(v.Command, &s) != nil {
		return ""
	}
	return s
}

// prettyJSON indents raw JSON for display; a JSON string holding JSON (the
// seeds' batch_remaining carries arguments that way) is unwrapped first.
// Text longer than limit is cut with a note.
func prettyJSON(raw json.RawMessage, limit int) string {
	raw = unwrapJSONString(raw)
	if len(raw) == 0 {
		return "{}"
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return cut(string(raw), limit)
	}
	return cut(out.String(), limit)
}

// compactJSON is prettyJSON on one line.
func compactJSON(raw json.RawMessage, limit int) string {
	raw = unwrapJSONString(raw)
	if len(raw) == 0 {
		return ""
	}
	var out bytes.Buffer
	if err := json.Compact(&out, raw); err != nil {
		return cut(string(raw), limit)
	}
	return cut(out.String(), limit)
}

func unwrapJSONString(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return raw
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return raw
	}
	if inner := bytes.TrimSpace([]byte(s)); json.Valid(inner) {
		return inner
	}
	return raw
}

// cut shortens s to at most limit bytes, on a rune boundary, with a note.
func cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	n := limit
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "… (" + strconv.Itoa(len(s)-n) + " more bytes)"
}

// timeLeft renders a duration as the page's countdown does.
func timeLeft(d time.Duration) string {
	if d <= 0 {
		return "time is up"
	}
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return strconv.Itoa(s/3600) + "h " + pad2(s%3600/60) + "m left"
	}
	return strconv.Itoa(s/60) + ":" + pad2(s%60) + " left"
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// resolutionText says how a question was settled and by whom, for people:
// "Approved (session) by Alice via slack".
func resolutionText(r messages.Resolved) string {
	d := r.Decision
	by := deciderText(d.DecidedBy)
	switch d.ReasonCode {
	case messages.ReasonApproved:
		return "Approved (" + scopeLabel(d.Scope) + ")" + by
	case messages.ReasonRejected:
		// An empty reject mode is a hard reject (DESIGN §3).
		t := "Rejected & stopped"
		if d.RejectMode == messages.RejectSoft {
			t = "Rejected (skip)"
		}
		t += by
		if d.Feedback != "" {
			t += `: "` + d.Feedback + `"`
		}
		return t
	case messages.ReasonCascade, messages.ReasonScopeGrant:
		return withReason("Allowed by a grant given on another question", d.Reason)
	case messages.ReasonHardStop:
		return withReason("Rejected: the agent's turn was stopped", d.Reason)
	case messages.ReasonTimeout:
		return "Timed out (no approver response)"
	case messages.ReasonCancelled:
		t := "Cancelled"
		if d.DecidedBy.Kind == messages.DeciderAgent {
			t = "Cancelled by the agent"
		}
		return withReason(t, d.Reason)
	case messages.ReasonPolicyAllow, messages.ReasonModeAllow:
		return withReason("Allowed by policy", d.Reason)
	case messages.ReasonPolicyDeny:
		return withReason("Denied by policy", d.Reason)
	}
	switch r.State {
	case messages.StateExpired:
		return "Timed out (no approver response)"
	case messages.StateCancelled:
		return withReason("Cancelled", d.Reason)
	case messages.StateApproved:
		return "Approved" + by
	case messages.StateRejected:
		return "Rejected" + by
	}
	return withReason("Settled elsewhere", d.Reason)
}

func withReason(t, reason string) string {
	if reason == "" {
		return t
	}
	return t + " (" + reason + ")"
}

// deciderText is " by Alice via slack", or "" when nobody is named.
func deciderText(d messages.Decider) string {
	who := d.Display
	if who == "" {
		who = d.ID
	}
	if who == "" {
		return ""
	}
	t := " by " + who
	if d.Channel != "" {
		t += " via " + d.Channel
	}
	return t
}

func scopeLabel(s messages.Scope) string {
	switch s {
	case messages.ScopeSession:
		return "session"
	case messages.ScopeAlways, messages.ScopeAlwaysPrefix:
		return "always"
	}
	return "once"
}

// replyMessage summarises the broker's reply to the viewer's own answer.
func replyMessage(rep messages.RespondReply, required int) string {
	switch {
	case rep.Applied && rep.State == messages.StatePending:
		return "Your approval counts: " + strconv.Itoa(len(rep.ApprovalsSoFar)) + " of " +
			strconv.Itoa(max(required, 1)) + " approvals"
	case rep.Applied && rep.Decision != nil:
		return "Done: " + resolutionText(messages.Resolved{State: rep.State, Decision: *rep.Decision})
	case rep.Applied:
		return "Done: " + string(rep.State)
	case rep.Reason != "":
		return "Not applied: " + rep.Reason
	case rep.Decision != nil:
		return "Not applied: already decided" + deciderText(rep.Decision.DecidedBy)
	}
	return "Not applied"
}

// deviceLabel names the device an answer came from: the client's own name
// for itself when it sent one, else a short label from its User-Agent
// ("Chrome on Android"). The result is one printable line of at most 64
// bytes.
func deviceLabel(supplied, userAgent string) string {
	if s := cleanLine(supplied, 64); s != "" {
		return s
	}
	ua := userAgent
	browser := ""
	switch {
	case ua == "":
		return "unknown device"
	case strings.HasPrefix(ua, "curl/"):
		return "curl"
	case strings.Contains(ua, "Edg/"):
		browser = "Edge"
	case strings.Contains(ua, "Firefox/"):
		browser = "Firefox"
	case strings.Contains(ua, "HeadlessChrome/"):
		browser = "Headless Chrome"
	case strings.Contains(ua, "Chrome/"), strings.Contains(ua, "Chromium/"), strings.Contains(ua, "CriOS/"):
		browser = "Chrome"
	case strings.Contains(ua, "Safari/"):
		browser = "Safari"
	}
	os := ""
	switch {
	case strings.Contains(ua, "Android"):
		os = "Android"
	case strings.Contains(ua, "iPhone"):
		os = "iPhone"
	case strings.Contains(ua, "iPad"):
		os = "iPad"
	case strings.Contains(ua, "Mac OS X"), strings.Contains(ua, "Macintosh"):
		os = "macOS"
	case strings.Contains(ua, "Windows"):
		os = "Windows"
	case strings.Contains(ua, "Linux"), strings.Contains(ua, "X11"):
		os = "Linux"
	}
	switch {
	case browser != "" && os != "":
		return browser + " on " + os
	case browser != "":
		return browser
	case os != "":
		return "browser on " + os
	}
	// An HTTP client of some other kind: its product token.
	name, _, _ := strings.Cut(ua, "/")
	if s := cleanLine(name, 32); s != "" {
		return s
	}
	return "unknown device"
}

// cleanLine keeps the printable characters of s on one line, trimmed to at
// most limit bytes.
func cleanLine(s string, limit int) string {
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > limit {
			break
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}
