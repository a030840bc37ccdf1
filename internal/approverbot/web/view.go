package web

import (
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/card"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// QuestionView is one open question as GET /api/questions and the
// "question" event carry it: the broker's question unchanged, plus what the
// page derives from it for the viewer.
type QuestionView struct {
	RequestID string                  `json:"request_id"`
	Question  messages.ApprovalNeeded `json:"question"`
	// SessionGrants and AlwaysGrants say what the Session and Always
	// answers would grant, the core's words first and the patterns quoted
	// after them (Offer.Said: `Session approves 1 bash pattern for
	// session s1, …, until the session ends: "bash(npm install *)"`);
	// empty when the answer is not offered.
	SessionGrants string `json:"session_grants,omitempty"`
	AlwaysGrants  string `json:"always_grants,omitempty"`
	// Actions are the actions POST /api/respond accepts for this question.
	Actions []string `json:"actions"`
	// Mine is set when the viewer is the human the agent works for: the
	// broker refuses their approval.
	Mine bool `json:"mine,omitempty"`
	// Tool is the tool's name as the card shows it (sanitised), for a
	// notification's title.
	Tool string `json:"tool,omitempty"`
	// Summary is the question in one short line, for a notification: the
	// agent's question, the command, or the main argument.
	Summary string `json:"summary,omitempty"`
	// Edit is what an editor of approve with changes starts from (absent
	// when the question offers none): POST /api/respond's edit replaces
	// its text.
	Edit *EditDraft `json:"edit,omitempty"`
	// Digest is the digest of the version of the question the card shows
	// (its data-digest): POST /api/respond's approvals name it.
	Digest string `json:"digest"`
	// HTML is the card as the page renders it.
	HTML string `json:"html"`
}

// summaryOf is a question's one-line summary (see QuestionView.Summary):
// the core's (a shell call's command, any other call's arguments all
// alike: red team AG F1), or the agent's description, named as such, for
// a call without arguments.
func summaryOf(v approverbot.View) string {
	s := v.Summary()
	if s == "" && v.Description != "" {
		s = "the agent says: " + v.Description
	}
	return card.Clip(card.OneLine(s), 140)
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
	Identity    string // card.IdentityText
	Session     string
	RequestedBy string
	Description string
	// Warnings come first on the card (the view's: disguised text,
	// argument keys a person could misread); ArgKeys are every key of the
	// arguments, in order; Cwd the directory the call runs in.
	Warnings []string
	ArgKeys  []string
	Cwd      string
	// MoreSubcommands is how many sub-commands are not listed.
	MoreSubcommands int
	// Command is the shell command when the arguments carry one.
	Command        string
	Args           string
	Rule           string
	Reason         string
	SafetyOverride string
	Subcommands    []verdictLine
	// NotAllowed are the sub-commands whose verdict is not allow: with
	// the warnings and the safety override, the card repeats them right
	// above its buttons when it is taller than the window (Recap; red
	// team AG F12: the buttons of a tall card are far below its verdict).
	NotAllowed  []verdictLine
	Recap       bool
	Batch       []batchLine
	ExpiresAt   string // RFC 3339, read by the page's countdown
	ExpiresText string // the same in words, for the first paint
	Required    int
	SoFar       []string
	// SessionOffer and Always say what those answers grant (nil: not
	// offered); NoSession and NoAlways why they are not offered.
	SessionOffer *grantLine
	Always       *grantLine
	NoSession    string
	NoAlways     string
	// Mine is set when the viewer is the human the agent works for;
	// NotYours says why they cannot approve.
	Mine     bool
	NotYours string
	// Unshown says why the page cannot show the whole question, which no
	// one may then approve; Refusal is why this viewer may not approve
	// (NotYours or Unshown), "" when they may.
	Unshown string
	Refusal string
	// Edit is the editor of approve with changes (nil when not offered:
	// one's own request, a quorum question, a call too long to change).
	Edit *editLine
	// Ask is set on an ask-user question: its questions and options, for
	// the answer form.
	Ask *askCard
	// StepUp says why approving needs the viewer's passkey or security
	// key ("" when it does not): the page asks for one on Approve.
	StepUp string
	// Digest is the digest of what the card shows; the page's answers
	// name it, so the bot refuses one given on a card of another version.
	Digest string
}

// askCard is an ask-user question's form: the questions with their
// options (Free: no questions, the answer is free text).
type askCard struct {
	Free      bool
	Questions []askLine
}

type askLine struct {
	Index            int
	Question, Header string
	Multi            bool
	Options          []askOption
}

type askOption struct {
	Index              int
	Label, Description string
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

// grantLine is what a Session or Always answer grants, in pieces, so the
// page can set patterns in code type.
type grantLine struct {
	Patterns []string // empty: the whole tool
	More     int      // patterns not listed
	Tool     string
	Session  string // a session grant's
	Agent    string // an always grant's
	// Scope says for whom, where and until when (Offer.ScopeLine).
	Scope string
	// Lead is what it grants in the core's words only (Offer.Lead), and
	// Calls its patterns as calls: the Confirm Always box says the one
	// and lists the other in code type, never one text of both (red team
	// AP F1: built from the card's textContent, a pattern's words read
	// as the grant's).
	Lead  string
	Calls []string
}

func newGrantLine(o approverbot.Offer) *grantLine {
	return &grantLine{Patterns: o.Patterns, More: o.MorePatterns, Tool: o.Tool, Session: o.Session, Agent: o.Agent, Scope: o.ScopeLine(),
		Lead: o.Lead(), Calls: o.Calls()}
}

func newCardData(q approverbot.Question, viewer string, now time.Time) cardData {
	d := cardFromView(approverbot.Present(q, approverbot.DefaultLimits), viewer, now)
	d.addEdit(q, viewer)
	d.Digest = q.ShownDigest()
	return d
}

// cardFromView lays the core's view out as a card for viewer.
func cardFromView(v approverbot.View, viewer string, now time.Time) cardData {
	d := cardData{
		ID:              v.RequestID,
		Tool:            v.Tool,
		Tier:            verdictClass(v.Tier, "exec"),
		Team:            v.Team,
		Agent:           v.AgentID,
		Identity:        v.Identity,
		Session:         v.SessionID,
		RequestedBy:     v.Requester,
		Description:     v.Description,
		Warnings:        v.Warnings,
		ArgKeys:         v.ArgKeys,
		Cwd:             v.Cwd,
		MoreSubcommands: v.MoreSubcommands,
		Command:         v.Command,
		Args:            v.Args,
		Rule:            v.Rule,
		Reason:          v.Why,
		SafetyOverride:  v.SafetyOverride,
		Required:        v.Required,
		SoFar:           v.SoFar,
		Mine:            v.Mine(viewer),
		StepUp:          v.StepUp,
	}
	if d.Mine {
		d.NotYours = approverbot.WhyNotMine
	}
	d.Refusal = d.NotYours
	if !v.Whole() {
		d.Unshown = v.WhyNotWhole("this page")
		d.Refusal = d.Unshown
	}
	if !v.ExpiresAt.IsZero() {
		d.ExpiresAt = v.ExpiresAt.UTC().Format(time.RFC3339Nano)
		d.ExpiresText = timeLeft(v.ExpiresAt.Sub(now))
	}
	for _, s := range v.Subcommands {
		l := verdictLine{Command: s.Command, Action: verdictClass(s.Action, "ask"), Rule: s.Rule, Reason: s.Reason}
		d.Subcommands = append(d.Subcommands, l)
		if s.Action != "allow" {
			d.NotAllowed = append(d.NotAllowed, l)
		}
	}
	d.Recap = len(d.Warnings) > 0 || d.SafetyOverride != "" || len(d.NotAllowed) > 0 || d.MoreSubcommands > 0
	for _, b := range v.Batch {
		d.Batch = append(d.Batch, batchLine{Tool: b.Tool, Args: b.Args})
	}
	if v.Ask != nil {
		d.Ask = &askCard{Free: len(v.Ask.Questions) == 0}
		for i, q := range v.Ask.Questions {
			l := askLine{Index: i, Question: q.Question, Header: q.Header, Multi: q.MultiSelect}
			for j, o := range q.Options {
				l.Options = append(l.Options, askOption{Index: j, Label: o.Label, Description: o.Description})
			}
			d.Ask.Questions = append(d.Ask.Questions, l)
		}
	}
	if o := v.Session; o.Offered {
		d.SessionOffer = newGrantLine(o)
	} else {
		d.NoSession = o.WhyNot
	}
	if o := v.Always; o.Offered {
		d.Always = newGrantLine(o)
	} else {
		d.NoAlways = o.WhyNot
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

// actionsOf lists the actions q (presented as v, with DefaultLimits)
// offers viewer. The page offers the
// approvals of a step-up question: it asks for the viewer's passkey or
// security key when one is clicked (stepup.go).
func actionsOf(q approverbot.Question, v approverbot.View, viewer string) []string {
	out := []string{}
	for _, c := range approverbot.Choices {
		if err := approverbot.OfferedIn(q, v, c, viewer); err == nil || errors.Is(err, approverbot.ErrStepUp) {
			out = append(out, string(c))
		}
	}
	if q.AskUser != nil && approverbot.OfferedIn(q, v, approverbot.ChoiceOnce, viewer) == nil {
		out = append(out, actionAnswer)
	}
	return out
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
		if len(d.Answer) > 0 {
			return "Answered" + by + ": " + approverbot.AnswerSummary(d.Answer)
		}
		if d.Edited() {
			return "Approved with changes (" + scopeLabel(d.Scope) + ")" + by + ": runs " +
				card.CompactArgs(d.UpdatedArguments, 200, nil)
		}
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
		// In plain words: the brokers' reason names policy internals.
		return "Allowed: " + approverbot.ReasonText(d)
	case messages.ReasonHardStop:
		return "Rejected: " + approverbot.ReasonText(d)
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

// deciderText is " by Alice via web (Chrome on Android)", or "" when nobody
// is named. The device tells apart the answers of one person on two.
func deciderText(d messages.Decider) string {
	if d.Display == "" && d.ID == "" {
		return ""
	}
	t := " by " + approverbot.DecidedBy(messages.Decision{DecidedBy: d})
	if dev := cleanLine(d.Device, 64); dev != "" {
		t += " (" + dev + ")"
	}
	return t
}

// scopeLabel names an approval's scope ("once" when the decision names
// none: an approval's default).
func scopeLabel(s messages.Scope) string {
	if s == "" {
		return "once"
	}
	return approverbot.ScopeText(s)
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
	switch {
	case ua == "":
		return "unknown device"
	case strings.HasPrefix(ua, "curl/"):
		return "curl"
	}
	browser, os := uaName(ua, uaBrowsers), uaName(ua, uaSystems)
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

// uaMark is a mark of a User-Agent string and the name it gives.
type uaMark struct{ mark, name string }

// The marks of the browsers and of the systems deviceLabel names, in the
// order they are looked for: Edge and Headless Chrome also say Chrome/,
// and Chrome also says Safari/.
var (
	uaBrowsers = []uaMark{{"Edg/", "Edge"}, {"Firefox/", "Firefox"}, {"HeadlessChrome/", "Headless Chrome"},
		{"Chrome/", "Chrome"}, {"Chromium/", "Chrome"}, {"CriOS/", "Chrome"}, {"Safari/", "Safari"}}
	uaSystems = []uaMark{{"Android", "Android"}, {"iPhone", "iPhone"}, {"iPad", "iPad"},
		{"Mac OS X", "macOS"}, {"Macintosh", "macOS"}, {"Windows", "Windows"}, {"Linux", "Linux"}, {"X11", "Linux"}}
)

// uaName is the name of the first of marks that ua contains ("" for none).
func uaName(ua string, marks []uaMark) string {
	for _, m := range marks {
		if strings.Contains(ua, m.mark) {
			return m.name
		}
	}
	return ""
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
