package workload

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// ReasonUnavailable is the reason code of the brokers' fail-closed deny
// when Redis cannot be reached.
const ReasonUnavailable = messages.ReasonUnavailable

// Entry is what the ledger knows about one request.
type Entry struct {
	ID, Session, Agent string
	Kind               Kind
	// Sent is when the agent called Request; Done when it returned.
	Sent, Done time.Time
	// Decisions are the decisions Request returned to the agent (one,
	// unless something is badly wrong); Err is its error.
	Decisions []messages.Decision
	Err       error
	// Questions counts the approver devices that saw the question.
	Questions int
	// Answers are the responses approvers sent, with the broker's replies.
	Answers []Answer
	// Published are the decisions seen on the decision subject.
	Published []messages.Decision
}

// Decision returns the decision the agent got, or nil.
func (e *Entry) Decision() *messages.Decision {
	if len(e.Decisions) == 0 {
		return nil
	}
	return &e.Decisions[0]
}

// Applied returns the answers the brokers applied.
func (e *Entry) Applied() []Answer {
	var out []Answer
	for _, a := range e.Answers {
		if a.Reply != nil && a.Reply.Applied {
			out = append(out, a)
		}
	}
	return out
}

// Answer is one response an approver device sent.
type Answer struct {
	Approver, Device string
	Approved         bool
	RejectMode       messages.RejectMode
	// Reply is the broker's reply; nil when none came (Err says why).
	Reply *messages.RespondReply
	Err   error
	At    time.Time
}

// Ledger records the life of every request of a scenario. It is safe for
// concurrent use.
type Ledger struct {
	mu      sync.Mutex
	entries map[string]*Entry
	order   []string
	strays  map[string]int // decisions published for ids nobody asked about
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{entries: map[string]*Entry{}, strays: map[string]int{}}
}

// Begin records that the agent of session is about to ask request id.
func (l *Ledger) Begin(id, session, agent string, kind Kind) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, dup := l.entries[id]; dup {
		panic("workload: request id used twice: " + id)
	}
	l.entries[id] = &Entry{ID: id, Session: session, Agent: agent, Kind: kind, Sent: time.Now()}
	l.order = append(l.order, id)
}

// Finish records what Request returned for id.
func (l *Ledger) Finish(id string, d *messages.Decision, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entries[id]
	e.Done = time.Now()
	if d != nil {
		e.Decisions = append(e.Decisions, *d)
	}
	if err != nil {
		e.Err = err
	}
}

// Knows reports whether id is a request of this ledger.
func (l *Ledger) Knows(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.entries[id]
	return ok
}

// Question records that an approver device saw the question of id.
func (l *Ledger) Question(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.entries[id]; ok {
		e.Questions++
	}
}

// Answered records a response to id and the broker's reply.
func (l *Ledger) Answered(id string, a Answer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.entries[id]; ok {
		e.Answers = append(e.Answers, a)
	}
}

// Published records a decision seen on a decision subject.
func (l *Ledger) Published(d messages.Decision) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.entries[d.RequestID]; ok {
		e.Published = append(e.Published, d)
		return
	}
	l.strays[d.RequestID]++
}

// Entries returns a copy of every entry, in the order the requests began.
func (l *Ledger) Entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Entry, len(l.order))
	for i, id := range l.order {
		e := *l.entries[id]
		e.Decisions = slices.Clone(e.Decisions)
		e.Answers = slices.Clone(e.Answers)
		e.Published = slices.Clone(e.Published)
		out[i] = e
	}
	return out
}

// Len returns the number of requests begun.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.order)
}

// Tolerance says which decisions a scenario's fault excuses. The zero value
// excuses nothing: every request must get exactly what the policy and the
// approvers said.
type Tolerance struct {
	// FailClosed reports whether the fail-closed deny d (reason
	// unavailable) of e is expected, e.g. because e was in flight while
	// Redis was away. Nil: none is.
	FailClosed func(e *Entry, d *messages.Decision) bool
	// Timeouts excuses questions that expired without an answer.
	Timeouts bool
	// Asked reports whether the policy allow e may have been asked
	// instead: a broker that cannot read the outbreak breakers asks to
	// fail closed (internal/engine, breakerAsks), e.g. while Redis is
	// away. Such an entry is then held to the rules of a question: decided
	// by an answer actually sent for it, or by its timeout. Nil: never.
	Asked func(e *Entry) bool
}

// Check returns every violation of the suite's invariants, one sentence
// each (empty: all held):
//
//   - every request got exactly one decision, for its own id and session,
//     and Request returned no error (nothing lost, nothing doubled);
//   - a policy allow got allow (policy_allow), a policy deny got deny
//     (policy_deny);
//   - a question was decided by an approver answer actually sent for it:
//     allow (approved) only after an approval, deny (rejected) only after a
//     rejection, never a decision other than the one the broker applied;
//   - nothing was allowed for any other reason;
//   - at most one answer per request was applied, and at most one decision
//     was published for it (published again unchanged counts once: the
//     broker's effects are at least once);
//   - a question answered by a human was seen by an approver device.
func (l *Ledger) Check(tol Tolerance) []string {
	var out []string
	bad := func(e *Entry, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s (%s, session %s): %s", e.ID, e.Kind, e.Session, fmt.Sprintf(format, args...)))
	}
	for _, e := range l.Entries() {
		switch {
		case e.Err != nil:
			bad(&e, "no decision: %v", e.Err)
			continue
		case len(e.Decisions) != 1:
			bad(&e, "%d decisions returned to the agent", len(e.Decisions))
			continue
		}
		d := e.Decision()
		if d.RequestID != e.ID || d.SessionID != e.Session {
			bad(&e, "decision is for request %s of session %s", d.RequestID, d.SessionID)
		}
		applied := e.Applied()
		if len(applied) > 1 {
			bad(&e, "%d answers applied (%s)", len(applied), describeAnswers(applied))
		}
		// Decisions are published at least once (the broker's outbox
		// publishes again when a replica failed before acknowledging):
		// repeats of one decision are one decision; two different ones
		// are not.
		if n := distinctDecisions(e.Published); n > 1 {
			bad(&e, "%d different decisions published", n)
		}
		for _, p := range e.Published {
			if p.Outcome != d.Outcome || p.ReasonCode != d.ReasonCode {
				bad(&e, "published %s/%s by %s but the agent got %s/%s by %s (%s): two decisions for one request",
					p.Outcome, p.ReasonCode, p.DecidedBy.ID, d.Outcome, d.ReasonCode, d.DecidedBy.ID, d.Reason)
			}
		}

		if d.ReasonCode == ReasonUnavailable {
			switch {
			case d.Outcome != messages.OutcomeDeny:
				bad(&e, "reason unavailable with outcome %s", d.Outcome)
			case tol.FailClosed == nil || !tol.FailClosed(&e, d):
				bad(&e, "unexpected fail-closed deny: %s", d.Reason)
			}
			continue
		}
		switch e.Kind {
		case KindAllow:
			switch {
			case d.Outcome == messages.OutcomeAllow && d.ReasonCode == messages.ReasonPolicyAllow:
			case d.DecidedBy.Kind != messages.DeciderPolicy && tol.Asked != nil && tol.Asked(&e):
				l.checkAsk(&e, d, applied, tol, bad)
			default:
				bad(&e, "a policy allow got %s/%s (%s)", d.Outcome, d.ReasonCode, d.Reason)
			}
		case KindDeny:
			if d.Outcome != messages.OutcomeDeny || d.ReasonCode != messages.ReasonPolicyDeny {
				bad(&e, "a policy deny got %s/%s (%s)", d.Outcome, d.ReasonCode, d.Reason)
			}
		case KindAsk:
			l.checkAsk(&e, d, applied, tol, bad)
		}
	}
	l.mu.Lock()
	for id, n := range l.strays {
		out = append(out, fmt.Sprintf("%s: %d decisions published for a request no agent of this scenario asked", id, n))
	}
	l.mu.Unlock()
	sort.Strings(out)
	return out
}

func (l *Ledger) checkAsk(e *Entry, d *messages.Decision, applied []Answer, tol Tolerance, bad func(*Entry, string, ...any)) {
	sent := func(approved bool) bool {
		for _, a := range e.Answers {
			if a.Approved == approved && a.Approver == d.DecidedBy.ID {
				return true
			}
		}
		return false
	}
	switch {
	case d.Outcome == messages.OutcomeAllow && d.ReasonCode == messages.ReasonApproved:
		if !sent(true) {
			bad(e, "allowed as approved by %q, but no such approval was sent", d.DecidedBy.ID)
		}
	case d.Outcome == messages.OutcomeDeny && d.ReasonCode == messages.ReasonRejected:
		if !sent(false) {
			bad(e, "rejected by %q, but no such rejection was sent", d.DecidedBy.ID)
		}
	case d.Outcome == messages.OutcomeDeny && d.ReasonCode == messages.ReasonTimeout:
		if !tol.Timeouts {
			bad(e, "the question timed out (%d devices saw it, %d answers)", e.Questions, len(e.Answers))
		}
		return
	default:
		bad(e, "a question got %s/%s (%s)", d.Outcome, d.ReasonCode, d.Reason)
		return
	}
	if e.Questions == 0 {
		bad(e, "decided by an approver, but no approver device saw the question")
	}
	if len(applied) == 1 {
		a := applied[0]
		if a.Approved != (d.Outcome == messages.OutcomeAllow) || a.Approver != d.DecidedBy.ID {
			bad(e, "the broker applied %s, the agent got %s by %s", describeAnswers(applied), d.Outcome, d.DecidedBy.ID)
		}
	}
	for _, a := range e.Answers {
		if a.Reply == nil || a.Reply.Applied || a.Reply.Decision == nil {
			continue
		}
		if a.Reply.Decision.Outcome != d.Outcome || a.Reply.Decision.ReasonCode != d.ReasonCode {
			bad(e, "a refused answer of %s was told the standing decision is %s/%s, the agent got %s/%s",
				a.Approver, a.Reply.Decision.Outcome, a.Reply.Decision.ReasonCode, d.Outcome, d.ReasonCode)
		}
	}
}

func describeAnswers(as []Answer) string {
	parts := make([]string, len(as))
	for i, a := range as {
		verb := "approve"
		if !a.Approved {
			verb = "reject"
		}
		parts[i] = fmt.Sprintf("%s by %s on %s", verb, a.Approver, a.Device)
	}
	return strings.Join(parts, ", ")
}

// Summary counts the decisions by kind and outcome/reason, for the log.
func (l *Ledger) Summary() string {
	counts := map[string]int{}
	for _, e := range l.Entries() {
		key := string(e.Kind) + "→"
		if d := e.Decision(); d != nil {
			key += string(d.Outcome) + "/" + string(d.ReasonCode)
		} else {
			key += "none"
		}
		counts[key]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, counts[k])
	}
	return fmt.Sprintf("%d requests: %s", l.Len(), strings.Join(parts, ", "))
}

// distinctDecisions counts the different decisions in ds: the same
// outcome, reason, decider and decision time is one decision delivered
// more than once.
func distinctDecisions(ds []messages.Decision) int {
	type id struct {
		outcome messages.Outcome
		reason  messages.ReasonCode
		by      string
		at      int64
	}
	seen := map[id]bool{}
	for _, d := range ds {
		seen[id{d.Outcome, d.ReasonCode, d.DecidedBy.ID, d.DecidedAt.UnixNano()}] = true
	}
	return len(seen)
}
