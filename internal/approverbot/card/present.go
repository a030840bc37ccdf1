package card

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Limits bound the parts of a question a channel shows, so a question fits
// the channel's message limits whatever the agent sends. A zero field takes
// [DefaultLimits]' value.
type Limits struct {
	Args        int // characters of the command, and of the other arguments
	Prose       int // characters of the description, the reason, the safety override
	Command     int // characters of one sub-command, rule, batch tool or grant pattern
	Subcommands int // sub-commands listed
	Batch       int // batch items listed
	BatchArgs   int // characters of one batch item's arguments
	Patterns    int // Always patterns listed
	Pattern     int // characters of one Always pattern
	// Warnings is the characters of all warnings together (one per line):
	// whole warnings are kept in order while they fit, and the rest are a
	// cut (a warning is never clipped mid-way nor dropped without a word).
	Warnings int
	// Ask is the characters of an ask-user question's lines together
	// (View.AskLines, one per line): more is a cut. 0: no bound beyond
	// each text's own (Prose for a question or description, Command for a
	// header or an option's label, each clipped text a cut).
	Ask int
	// Width measures characters (nil: one per character).
	Width Width
}

// DefaultLimits are the bounds of a channel without tight message limits
// (the terminal, the web page, the webhook): they hold whole any question
// within the brokers' default message limit (512 KiB: a megabyte of
// characters of arguments, a 64 Ki sub-command, working directory or
// pattern), so those channels do not cut what the human judges. A question
// they would cut is not whole anywhere, and no channel approves it
// (approverbot.Offered): what no display can show, nobody approves.
var DefaultLimits = Limits{Args: 1 << 20, Prose: 2000, Command: 1 << 16, Subcommands: 1 << 16, Batch: 1 << 10, BatchArgs: 240, Patterns: 1 << 10, Pattern: 1 << 16, Warnings: 1 << 16}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	for _, f := range []struct{ v, def *int }{
		{&l.Args, &d.Args}, {&l.Prose, &d.Prose}, {&l.Command, &d.Command}, {&l.Subcommands, &d.Subcommands},
		{&l.Batch, &d.Batch}, {&l.BatchArgs, &d.BatchArgs}, {&l.Patterns, &d.Patterns}, {&l.Pattern, &d.Pattern},
		{&l.Warnings, &d.Warnings},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return l
}

// View is a question as every channel shows it (DESIGN §7: tool,
// arguments, the sub-commands with their verdicts, why it asks, the rest of
// the batch, time left, what Session and Always would grant). The core
// builds it once; a channel only lays it out in its own markup. Every text
// the agent controls is sanitised (see sanitize.go) and clipped to the
// channel's [Limits], but not escaped: escaping is the channel's markup's
// business.
type View struct {
	RequestID, Tool, Team, Tier              string
	SessionID, AgentID, AgentType, Requester string
	// Identity says how the broker knows the agent, session and agent type
	// (IdentityText): "verified" only when its NATS credentials are that
	// agent's, else "declared, not verified".
	Identity string
	// Cwd is the working directory the call runs in ("" when the request
	// names none).
	Cwd string
	// Warnings come before anything else on the card: disguised text
	// (bidi, invisible and control characters escaped as <U+2067>, words
	// that mix scripts, host names outside ASCII, with their punycode) and
	// argument keys a person could misread (see keys.go). Empty when there
	// is nothing to warn of.
	Warnings []string
	// MoreWarnings counts the warnings the channel's limit left out
	// (Limits.Warnings); they make the card not whole.
	MoreWarnings int
	// Cut names what the channel's limits left out of the card ("12
	// sub-commands", "the end of the arguments"); empty when the card is
	// whole. A channel must not offer an approval of a card that is not
	// whole: it sends the approver where the whole call shows (see
	// [View.Whole]).
	Cut []string
	// NowhereWhole is set when no channel shows the question whole (it is
	// cut even within DefaultLimits): it can only be rejected.
	NowhereWhole bool
	// ArgKeys are the keys of the call's arguments in the order they came,
	// repeats included: every key is shown, also those of Args.
	ArgKeys []string
	// Description is the agent's own account of the call.
	Description string
	// Command is the "command" argument of a call the brokers judged as
	// a shell call (Risk.Shell): the script that runs. It is "" for every
	// other tool, whose "command" key (if any) is an argument like the
	// others: what such a tool acts on is decided by its own schema,
	// which the card does not know, so no argument is promoted (red team
	// AG F1: a decoy "command" on an MCP tool that runs "sql"). Args is
	// the other arguments (every argument, when Command is "") as
	// indented JSON.
	Command, Args string
	// Subcommands are the parsed sub-commands with their verdicts;
	// MoreSubcommands how many more were not listed.
	Subcommands     []SubcommandView
	MoreSubcommands int
	// Why is why the policy asks; Rule the rule that matched (empty when
	// Why already names it); SafetyOverride a built-in safety check that
	// overrode the rules.
	Why, Rule, SafetyOverride string
	// Batch is what the agent's batch runs after this call; MoreBatch how
	// many more calls were not listed.
	Batch     []BatchView
	MoreBatch int
	// ExpiresAt is when the reaper rejects the question (zero: never).
	ExpiresAt time.Time
	// Required approvals, and the approver ids counted so far.
	Required int
	SoFar    []string
	// Session and Always say what those answers would grant, or why they
	// are not offered.
	Session, Always Offer
	// Ask is set on an ask-user question: the tool's questions and their
	// options, clipped (no questions: a free-text answer). Indexes match
	// the question's, so a pick made on the view names the same option.
	Ask *messages.AskUser
	// StepUp, on a question whose approval needs a second factor (a fresh
	// WebAuthn assertion), says why ("rule bash(kubectl *)", "team
	// prod"); empty otherwise. Only a channel that takes an assertion (the
	// web page) may offer Approve on it: see [View.ApproveHere].
	StepUp string
}

// SubcommandView is one sub-command of a shell call and its verdict.
type SubcommandView struct {
	// Command is the sub-command as parsed ("write to FILE" for a
	// redirection).
	Command string
	// Action is allow, ask or deny; Mark the same with its symbol.
	Action, Mark string
	// Rule and Reason explain the verdict; both empty when they only
	// repeat why the question asks.
	Rule, Reason string
}

// Explain is the sub-command's rule and reason in one phrase ("rule
// bash(kubectl *): kubectl goes to oncall"); "" when it has neither.
func (s SubcommandView) Explain() string {
	var why []string
	if s.Rule != "" {
		why = append(why, "rule "+s.Rule)
	}
	if s.Reason != "" {
		why = append(why, s.Reason)
	}
	return strings.Join(why, ": ")
}

// BatchView is one call the batch runs next: its tool and its arguments
// on one line, all alike (the batch is not judged: no argument of it is
// promoted).
type BatchView struct{ Tool, Args string }

// Offer is one standing answer (Session, Always): what it would grant, or
// why it is not offered. The brokers say both (ApprovalNeeded.Offers); for
// a question of an older broker without offers the core says what that
// broker grants (see offer.go).
type Offer struct {
	Offered bool
	// Scope is the scope the answer sends (session, always or
	// always_prefix).
	Scope messages.Scope
	// Tool, Patterns (empty: every call of Tool; MorePatterns not listed),
	// Session (a session grant's) and Agent (an always grant's) say what
	// the answer grants, in pieces: a channel says it with [Offer.Lead]
	// or [Offer.Brief] (the core's words) and the patterns set apart after
	// them ([Offer.Calls]), or [Offer.Said] in a text without markup.
	Tool         string
	Patterns     []string
	MorePatterns int
	Session      string
	Agent        string
	// Where, Until and Warning are the rest: where the grant
	// holds ("in any working directory (this call's: /w)"), until when
	// ("for 30 days or until revoked") and, on an Always for a host-like
	// agent id ([HostLike]), the warning that every session running as
	// that host gets it ("" otherwise).
	Where, Until, Warning string
	// Note is the brokers' condition on the offer (a quorum's); "" when
	// there is none.
	Note string
	// WhyNot says why the answer is not offered (empty when it is).
	WhyNot string
}

// Present builds the view of q within l.
func Present(q messages.ApprovalNeeded, l Limits) View {
	v := present(q, l)
	if !v.Whole() {
		// Whether another channel shows it all decides what the card tells
		// the approver to do: approve there, or only reject.
		v.NowhereWhole = !present(q, DefaultLimits).Whole()
	}
	return v
}

// present is Present without NowhereWhole.
func present(q messages.ApprovalNeeded, l Limits) View {
	l = l.withDefaults()
	z := &sanitizer{}
	raw, batchRaw := q.Request.Arguments, q.BatchRemaining
	if len(batchRaw) == 0 {
		batchRaw = q.Request.BatchRemaining
	}
	q = clean(q, z)
	req := q.Request
	v := View{
		RequestID: req.RequestID, Tool: req.Tool, Team: q.Team, Tier: q.Risk.Tier,
		SessionID: req.SessionID, AgentID: req.AgentID, AgentType: req.AgentType, Requester: req.RequestedBy,
		Identity:       IdentityText(req.Identity),
		Cwd:            ClipWidth(PathLine(req.Cwd), l.Command, l.Width),
		Description:    ClipWidth(OneLine(req.Description), l.Prose, l.Width),
		Why:            ClipWidth(OneLine(q.Risk.Reason), l.Prose, l.Width),
		Rule:           ClipWidth(OneLine(q.Risk.Rule), l.Command, l.Width),
		SafetyOverride: ClipWidth(OneLine(q.Risk.SafetyOverride), l.Prose, l.Width),
		ExpiresAt:      q.ExpiresAt,
		Required:       max(q.ApprovalsRequired, 1),
		SoFar:          q.ApprovalsSoFar,
	}
	if q.StepUp != nil {
		v.StepUp = ClipWidth(z.line(q.StepUp.Why), l.Prose, l.Width)
		if v.StepUp == "" {
			v.StepUp = "the policy"
		}
	}
	var argsCut bool
	v.Command, v.Args, argsCut = splitArgs(raw, q.Risk.Shell, l.Args, l.Width, z)
	keys := ArgKeys(raw)
	for _, k := range keys {
		v.ArgKeys = append(v.ArgKeys, ClipWidth(z.line(k), l.Command, l.Width))
	}
	nested, read := nestedRepeats(raw)
	keyNotes := keyWarnings(keys, nested, z)
	if ns := InexactNumbers(raw); len(ns) > 0 {
		keyNotes = append(keyNotes, "⚠ Numbers a program that reads them as doubles (JavaScript) takes for others: "+strings.Join(ns, "; ")+".")
	}
	if v.SafetyOverride != "" && strings.Contains(v.Why, v.SafetyOverride) {
		// The reason only repeats the override, shown on its own.
		v.Why = ""
	}
	if v.Rule != "" && strings.Contains(v.Why, v.Rule) {
		v.Rule = ""
	}
	subs := q.Risk.Subcommands
	for _, s := range subs[:min(len(subs), l.Subcommands)] {
		v.Subcommands = append(v.Subcommands, subcommandView(s, q.Risk.Reason, l))
	}
	v.MoreSubcommands = len(subs) - len(v.Subcommands)
	batch := q.BatchRemaining
	if len(batch) == 0 {
		batch = req.BatchRemaining
	}
	for i, b := range batch[:min(len(batch), l.Batch)] {
		args := batchRaw[i].Arguments
		v.Batch = append(v.Batch, BatchView{Tool: ClipWidth(OneLine(b.Tool), l.Command, l.Width),
			Args: compactArgs(args, l.BatchArgs, l.Width, z)})
	}
	v.MoreBatch = len(batch) - len(v.Batch)
	v.Session, v.Always = Offers(q, l)
	v.Ask = askView(q.AskUser, l)
	var warnings []string
	if w := z.warning(); w != "" {
		warnings = append(warnings, w)
	}
	if n := cdNote(q.Risk.Subcommands); n != "" {
		keyNotes = append(keyNotes, n)
	}
	v.Warnings, v.MoreWarnings = fitWarnings(append(warnings, keyNotes...), l)
	v.Cut = append(cutParts(v, argsCut), unseenArguments(raw, keys, nested, read, z)...)
	if l.Ask > 0 && measure(strings.Join(v.AskLines(), "\n"), l.Width) > l.Ask {
		v.Cut = append(v.Cut, "the end of the agent's questions (too long together)")
	}
	return v
}

// unseenArguments names what no card shows of the arguments, whatever the
// channel's limits: a key given twice has a value the card does not show
// (it shows the last; a host's parser may keep the first: red team V3),
// a check for such keys that could not read the arguments to the end has
// not seen them all (Y2), and a summary stands in for an argument too
// large to send (V2). Nobody approves such a call.
func unseenArguments(raw json.RawMessage, keys, nested []string, read bool, z *sanitizer) []string {
	var out []string
	for _, k := range repeatedKeys(keys, nested) {
		out = append(out, "every value of the repeated argument "+strconv.Quote(z.line(k)))
	}
	if !read {
		out = append(out, "a check of the arguments for repeated keys, which could not read them to the end")
	}
	for _, k := range SummarisedKeys(raw) {
		out = append(out, "the whole of "+strconv.Quote(z.line(k))+" (too large to send: only its size, SHA-256 and first bytes are here)")
	}
	return out
}

// FirstWarning puts w before the view's warnings, within l.Warnings: the
// warnings that no longer fit are counted in MoreWarnings.
func (v *View) FirstWarning(w string, l Limits) {
	l = l.withDefaults()
	all := append([]string{w}, v.Warnings...)
	var more int
	v.Warnings, more = fitWarnings(all, l)
	v.MoreWarnings += more
}

// fitWarnings keeps the warnings that fit l.Warnings together (one per
// line, in order) and returns how many did not fit.
func fitWarnings(ws []string, l Limits) ([]string, int) {
	used := 0
	for i, w := range ws {
		n := measure(w, l.Width)
		if i > 0 {
			n++ // the line break
		}
		if used+n > l.Warnings {
			return ws[:i], len(ws) - i
		}
		used += n
	}
	return ws, 0
}

func subcommandView(s messages.Verdict, why string, l Limits) SubcommandView {
	cmd := s.Command
	if cmd == "" {
		cmd = strings.Join(s.Words, " ")
	}
	if s.Kind == "redirect" {
		cmd = "write to " + cmd
	}
	sv := SubcommandView{Command: ClipWidth(OneLine(cmd), l.Command, l.Width), Action: s.Action, Mark: VerdictMark(s.Action)}
	if s.Reason != why {
		sv.Rule = ClipWidth(OneLine(s.Rule), l.Command, l.Width)
		sv.Reason = ClipWidth(OneLine(s.Reason), l.Prose, l.Width)
	}
	return sv
}

// Left is the time until the question expires (0 or less: expired; 0
// too when it never expires: check ExpiresAt).
func (v View) Left(now time.Time) time.Duration {
	if v.ExpiresAt.IsZero() {
		return 0
	}
	return v.ExpiresAt.Sub(now).Round(time.Second)
}

// TimeLeft says how long the question stays open, to the second: "4m30s
// left", "expired: the reaper rejects it shortly"; "" when it never
// expires.
func (v View) TimeLeft(now time.Time) string {
	if v.ExpiresAt.IsZero() {
		return ""
	}
	d := v.Left(now)
	if d <= 0 {
		return "expired: the reaper rejects it shortly"
	}
	return d.String() + " left"
}

// Approvals says how many approvals the question needs and has ("2 of 3
// so far: alice, bob"); "" for a single-approval question nobody approved.
func (v View) Approvals() string {
	if v.Required <= 1 && len(v.SoFar) == 0 {
		return ""
	}
	s := strconv.Itoa(len(v.SoFar)) + " of " + strconv.Itoa(v.Required)
	if len(v.SoFar) == 0 {
		return s + " needed, none yet"
	}
	return s + " so far: " + strings.Join(v.SoFar, ", ")
}

// Mine reports whether approver is the human the agent works for: the
// brokers refuse their approval (nobody approves their own request), not
// their rejection.
func (v View) Mine(approver string) bool { return approver != "" && v.Requester == approver }

// WhyNotMine is why no approval is offered on one's own request (the
// rejections are).
const WhyNotMine = "it was made on your behalf, so another approver must approve it; you may reject it"

// Summary is the call on one line, for notices and notifications: the
// agent's (first) question on an ask-user call, a shell call's command,
// any other call's arguments all alike (none promoted: see Command);
// "" when the call has none of these. It is sanitised and folded onto
// one line, not clipped.
func (v View) Summary() string {
	switch {
	case v.Ask != nil && len(v.Ask.Questions) > 0:
		return OneLine(v.Ask.Questions[0].Question)
	case v.Command != "":
		return OneLine(v.Command)
	}
	return OneLine(v.Args)
}

// Short is what the answer grants without the session or agent:
// "bash(git push *)", "every write call"; "" when it is not offered.
func (o Offer) Short() string {
	if !o.Offered {
		return ""
	}
	if len(o.Patterns) == 0 {
		return "every " + o.Tool + " call"
	}
	calls := make([]string, len(o.Patterns))
	for i, p := range o.Patterns {
		calls[i] = o.Tool + "(" + p + ")"
	}
	s := strings.Join(calls, ", ")
	if o.MorePatterns > 0 {
		s += " and " + strconv.Itoa(o.MorePatterns) + " more"
	}
	return s
}

// Whole reports whether the card shows everything the human judges: no
// sub-command, argument, batch call or grant pattern was left out.
func (v View) Whole() bool { return len(v.Cut) == 0 }

// WhyNotWhole says what the card leaves out, for the channel to tell the
// approver why it offers no approval here ("" when the card is whole).
func (v View) WhyNotWhole(channel string) string {
	if v.Whole() {
		return ""
	}
	if v.NowhereWhole {
		return "This question is too long for any approver display; not shown: " + strings.Join(v.Cut, ", ") +
			". Nobody can approve what no display shows whole: you may reject it (the agent may split the call)."
	}
	return "This question is too long for " + channel + "; not shown here: " + strings.Join(v.Cut, ", ") +
		". Approve it on the approver web page or the terminal, where all of it shows; you may reject it here."
}

// ApproveHere reports whether a channel that cannot take a WebAuthn
// assertion (every chat channel, the terminal, the webhook) may offer an
// approval of v: it is whole and needs no step-up. When it is false the
// channel offers the rejections and a link to the web page.
func (v View) ApproveHere() bool { return v.Whole() && v.StepUp == "" }

// WhyNotHere says why such a channel offers no approval of v ("" when it
// may): the card is not whole, or approving needs step-up.
func (v View) WhyNotHere(channel string) string {
	if why := v.WhyNotWhole(channel); why != "" {
		return why
	}
	if v.StepUp == "" {
		return ""
	}
	return "Approving this call needs your passkey or security key (step-up: " + v.StepUp +
		"), which " + channel + " cannot ask for. Approve it on the approver web page; you may reject it here."
}

// cutParts names what was left out of v.
func cutParts(v View, argsCut bool) []string {
	var out []string
	n := func(k int, one, many string) {
		switch {
		case k == 1:
			out = append(out, "1 "+one)
		case k > 1:
			out = append(out, strconv.Itoa(k)+" "+many)
		}
	}
	n(v.MoreWarnings, "warning", "warnings")
	n(v.MoreSubcommands, "sub-command", "sub-commands")
	// A field the approval depends on that was clipped to the channel's
	// width is a cut too, whatever was left of it: the working directory,
	// a sub-command, a grant pattern. (A text that ends with "…" of its
	// own counts as clipped: the card then offers less, never more.)
	if clipped(v.Cwd) {
		out = append(out, "the end of the working directory")
	}
	subs := 0
	for _, s := range v.Subcommands {
		if clipped(s.Command) {
			subs++
		}
	}
	n(subs, "sub-command's end", "sub-commands' ends")
	if argsCut {
		out = append(out, "the end of the arguments")
	}
	// An answer is chosen by what the options say: a clipped question,
	// header, option or description is a cut (red team AB4).
	n(clippedAsk(v.Ask), "of the agent's questions or options clipped", "of the agent's questions or options clipped")
	n(v.MoreBatch, "call of the batch", "calls of the batch")
	if v.Session.Offered {
		n(v.Session.MorePatterns, "Session pattern", "Session patterns")
		n(clippedCount(v.Session.Patterns), "Session pattern's end", "Session patterns' ends")
	}
	if v.Always.Offered {
		n(v.Always.MorePatterns, "Always pattern", "Always patterns")
		n(clippedCount(v.Always.Patterns), "Always pattern's end", "Always patterns' ends")
	}
	return out
}

// clipped reports whether s was cut by ClipWidth (it ends with "…").
func clipped(s string) bool { return strings.HasSuffix(s, "…") }

// clippedAsk is how many texts of an ask-user question's view were cut by
// ClipWidth.
func clippedAsk(ask *messages.AskUser) int {
	if ask == nil {
		return 0
	}
	k := 0
	for _, q := range ask.Questions {
		k += clippedCount([]string{q.Question, q.Header})
		for _, o := range q.Options {
			k += clippedCount([]string{o.Label, o.Description})
		}
	}
	return k
}

// clippedCount is how many of ss were cut by ClipWidth.
func clippedCount(ss []string) int {
	k := 0
	for _, s := range ss {
		if clipped(s) {
			k++
		}
	}
	return k
}

// IdentityText is how a card names a request's identity. Only the broker's
// "verified" reads as verified; "declared", no value (an older broker) and
// a value this bot does not know all read "declared, not verified": a
// card never vouches for what it was not told was checked.
func IdentityText(id messages.Identity) string {
	if id == messages.IdentityVerified {
		return "verified"
	}
	return "declared, not verified"
}

// cdNote says that a script changes directory, naming the first change:
// the card shows one working directory for the call, while the
// sub-commands after a cd run where it leads (cd ~ && rm -rf .ssh removes
// ~/.ssh, not the .ssh of the directory shown: red team AG F5). "" when
// no sub-command changes directory.
func cdNote(subs []messages.Verdict) string {
	for _, s := range subs {
		if len(s.Words) == 0 {
			continue
		}
		switch s.Words[0] {
		case "cd", "pushd", "popd", "chdir":
			return "⚠ The command changes directory (" + OneLine(s.Command) + "): the paths of what runs after it are relative to where it leads, not to the working directory shown."
		}
	}
	return ""
}
