package approverbot

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Question is a question as the bot knows it: the broker's approval_needed,
// and once settled, how.
type Question struct {
	messages.ApprovalNeeded
	// Resolved is set once the question is settled (nil while open).
	Resolved *messages.Resolved
	// Seen is when this bot first saw the question.
	Seen time.Time
	// Routes are the teams the question was announced to (a copy per
	// team: an escalation may add one), each with the answerers its copies
	// named (nil: a broker that did not say). Who may see the question is
	// decided per team (Admits), never from one team and another's
	// answerers. Never changed in place: the board replaces the map.
	Routes map[string]*messages.Answerers
	// Settled is when this bot saw the question's resolution (zero while
	// open).
	Settled time.Time
	// Follows is set on a question that came soon after the agent
	// withdrew another question of one of its teams (within
	// [followWindow] of seeing that withdrawal): in a chat, the new card
	// takes the old one's place at the foot of the conversation, and a
	// card made to look like the withdrawn one reads as the one the
	// approver had been reading (red team AR R6). Every channel says so
	// first ([Present]) and approving answers wait [FollowHold] after
	// the bot first saw it ([Choose]).
	Follows *Withdrawn
}

// Withdrawn is the question a new one followed: the withdrawn call (its
// announcement; a zero Tool when this bot never saw it announced) and how
// long before the new one it was withdrawn.
type Withdrawn struct {
	Call   messages.ApprovalNeeded
	Before time.Duration
}

// followWindow is how long after a withdrawal a new question of the same
// team is marked as following it ([Question.Follows]).
const followWindow = time.Minute

// FollowHold is how long after this bot first saw a question that follows
// a withdrawn one an approving answer to it is held back: long enough to
// read that it is another question.
const FollowHold = 2500 * time.Millisecond

// Open reports whether the question still waits for answers.
func (q Question) Open() bool { return q.Resolved == nil }

// Admits reports whether approver id (with provider groups) may see q: for
// some team q was announced to, sees(team) — the teams this bot lets them
// use — and that team's answerers admit them (a copy that named none: the
// config alone).
func (q Question) Admits(sees func(team string) bool, id string, groups []string) bool {
	if len(q.Routes) == 0 {
		return sees(q.Team) && (q.Answerers == nil || q.Answerers.Admit(id, groups))
	}
	for team, a := range q.Routes {
		if sees(team) && (a == nil || a.Admit(id, groups)) {
			return true
		}
	}
	return false
}

// AnyTeam reports whether sees admits one of the teams q was announced to.
func (q Question) AnyTeam(sees func(team string) bool) bool {
	if len(q.Routes) == 0 {
		return sees(q.Team)
	}
	for team := range q.Routes {
		if sees(team) {
			return true
		}
	}
	return false
}

// settledKeep is how long a settled question stays known, so a late click
// gets "already decided by …" instead of "unknown question".
const settledKeep = 15 * time.Minute

// board is the bot's table of questions, keyed by request id.
type board struct {
	mu sync.Mutex
	qs map[string]*Question
	// withdrawn is, by team, the latest question of that team withdrawn
	// or expired ([Question.Follows]).
	withdrawn map[string]*Question
	// now is the clock (tests).
	now func() time.Time
}

func newBoard() *board {
	return &board{qs: map[string]*Question{}, withdrawn: map[string]*Question{}, now: time.Now}
}

// upsert records a question; it returns the stored question and whether it
// changed (new, new approvals, or a new reminder). A question already settled stays settled:
// a late or replayed announcement must not reopen it.
//
// A question, once announced, never changes (DESIGN §3): a copy that shows
// anything else than the open question (another call, verdict, offer…),
// or whose digest is not the digest of what it shows, is refused with
// [ErrChangedQuestion] and the board keeps what it had. On a plane whose
// NATS lets others publish questions, that copy is an attack: an approver
// would approve what the card shows while the brokers allow what they hold.
func (b *board) upsert(q messages.ApprovalNeeded) (Question, bool, error) {
	shown := q.ShownDigest()
	if q.Digest != "" && q.Digest != shown {
		return Question{}, false, fmt.Errorf("%w: its digest %s is not the digest of what it shows (%s)", ErrChangedQuestion, q.Digest, shown)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	cur, ok := b.qs[q.Request.RequestID]
	if !ok {
		n := &Question{ApprovalNeeded: q, Seen: b.now(), Routes: map[string]*messages.Answerers{q.Team: q.Answerers}}
		n.Follows = b.withdrawnBeforeLocked(q.Team, n.Seen)
		b.qs[q.Request.RequestID] = n
		return *n, true, nil
	}
	if !cur.Open() {
		return *cur, false, nil
	}
	if was := cur.ShownDigest(); was != shown {
		return *cur, false, fmt.Errorf("%w: the open question shows %s, the new copy %s", ErrChangedQuestion, was, shown)
	}
	// A reminder (an escalation step) is a change too: channels show it
	// again. A replayed or repeated copy of an older one is not.
	reminded := q.Reminder > cur.Reminder
	changed := len(q.ApprovalsSoFar) != len(cur.ApprovalsSoFar) || reminded
	if !reminded && q.Reminder < cur.Reminder {
		q.Reminder = cur.Reminder
	}
	// A question routed to several teams (an escalation added one) may be
	// answered by the members of any: its copies' answerers add up, and
	// each team keeps its own (Routes). A copy that adds a team or admits
	// more people is a change: channels judge again who sees it.
	routed := cur.Routes[q.Team]
	joined := joinAnswerers(routed, q.Answerers)
	if _, had := cur.Routes[q.Team]; !had || widens(routed, joined) {
		changed = true
	}
	routes := maps.Clone(cur.Routes)
	routes[q.Team] = joined
	q.Answerers = joinAnswerers(cur.Answerers, q.Answerers)
	cur.ApprovalNeeded, cur.Routes = q, routes
	return *cur, changed, nil
}

// withdrawnBeforeLocked is the latest question of team withdrawn at most
// followWindow before now, or nil. A question of the team, not of the
// session or the agent: the agent names both, and what it deceives is the
// conversation the cards share.
func (b *board) withdrawnBeforeLocked(team string, now time.Time) *Withdrawn {
	last := b.withdrawn[team]
	if last == nil || now.Sub(last.Settled) > followWindow {
		return nil
	}
	return &Withdrawn{Call: last.ApprovalNeeded, Before: now.Sub(last.Settled)}
}

// noteWithdrawnLocked records cur, just settled, as its teams' latest
// withdrawn question when the agent withdrew it or let it expire on a time
// limit it chose (ttl_ms; red team AU F5).
func (b *board) noteWithdrawnLocked(cur *Question) {
	if st := cur.Resolved.State; st != messages.StateCancelled && st != messages.StateExpired {
		return
	}
	if cur.Team != "" {
		b.withdrawn[cur.Team] = cur
	}
	for team := range cur.Routes {
		b.withdrawn[team] = cur
	}
}

// widens reports whether answerers b admit someone a did not (b joins a
// and a later copy's).
func widens(a, b *messages.Answerers) bool {
	switch {
	case a == nil || b == nil:
		return false // nil: the config alone; joining never makes it narrower
	case b.Open && !a.Open:
		return true
	}
	return len(b.Members) > len(a.Members) || len(b.Groups) > len(a.Groups)
}

// joinAnswerers is who the answerers of either copy admit (nil: a copy
// from a broker that did not say).
func joinAnswerers(a, b *messages.Answerers) *messages.Answerers {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	members, groups := slices.Clone(a.Members), slices.Clone(a.Groups)
	for _, m := range b.Members {
		if !slices.Contains(members, m) {
			members = append(members, m)
		}
	}
	for _, g := range b.Groups {
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	return &messages.Answerers{Members: members, Groups: groups, Open: a.Open || b.Open}
}

// ErrChangedQuestion: a copy of a question shows something else than the
// question it claims to be; it is not shown.
var ErrChangedQuestion = errors.New("a re-announcement changes an open question")

// resolve marks a question settled; it returns the question and whether it
// was open. A resolution of another session's request of the same id
// changes nothing. A resolution for a question never seen is kept too (an answer
// from a device that connected late).
func (b *board) resolve(r messages.Resolved) (Question, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur, ok := b.qs[r.RequestID]
	if ok && cur.Request.SessionID != "" && r.SessionID != "" && r.SessionID != cur.Request.SessionID {
		// A request id is unique only within its session: this settles
		// another session's request of the same id, not the question
		// shown (red team AT F1: an agent that reused a victim's id and
		// withdrew its own request took the victim's card off every
		// device).
		return *cur, false
	}
	if !ok {
		cur = &Question{Seen: b.now()}
		cur.Request.RequestID, cur.Request.SessionID, cur.Team = r.RequestID, r.SessionID, r.Team
		b.qs[r.RequestID] = cur
	}
	wasOpen := cur.Open()
	if wasOpen {
		rr := r
		cur.Resolved, cur.Settled = &rr, b.now()
		b.noteWithdrawnLocked(cur)
	}
	return *cur, wasOpen && ok
}

func (b *board) get(id string) (Question, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q, ok := b.qs[id]
	if !ok {
		return Question{}, false
	}
	return *q, true
}

// open lists the open questions, oldest first.
func (b *board) open() []Question {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Question, 0, len(b.qs))
	for _, q := range b.qs {
		if q.Open() {
			out = append(out, *q)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Seen.Equal(out[j].Seen) {
			return out[i].Seen.Before(out[j].Seen)
		}
		return out[i].Request.RequestID < out[j].Request.RequestID
	})
	return out
}

// openIDs returns the ids of open questions of team.
func (b *board) openIDs(team string) map[string]bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]bool{}
	for id, q := range b.qs {
		if q.Open() && q.Team == team {
			out[id] = true
		}
	}
	return out
}

// prune forgets settled questions older than settledKeep and returns the
// open ones long past their expiry (their resolution was missed), which the
// caller settles.
func (b *board) prune() []Question {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	var missed []Question
	for id, q := range b.qs {
		switch {
		case q.Resolved != nil && now.Sub(q.Resolved.Decision.DecidedAt) > settledKeep && now.Sub(q.Seen) > settledKeep:
			delete(b.qs, id)
		case q.Resolved == nil && !q.ExpiresAt.IsZero() && now.Sub(q.ExpiresAt) > time.Minute:
			missed = append(missed, *q)
		}
	}
	return missed
}
