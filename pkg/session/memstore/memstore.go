package memstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Options configures a [Store].
type Options struct {
	// Clock is the store's clock, the only one that decides expiry and
	// retention (the in-memory counterpart of Redis TIME). Default time.Now.
	Clock func() time.Time
	// Retention is how long settled requests stay readable and how long an
	// unused session keeps its grants. Zero or negative means
	// session.DefaultRetention (24 h).
	Retention time.Duration
	// EffectLease is how long a transition's caller alone carries out the
	// effects it recorded in the outbox. Zero or negative means
	// session.DefaultEffectLease (5 s).
	EffectLease time.Duration
}

// Store is an in-memory [session.Store]. Its methods are safe for concurrent
// use; see the package documentation for lifetimes.
type Store struct {
	clock       func() time.Time
	retention   time.Duration
	effectLease time.Duration

	mu     sync.Mutex
	closed bool
	seq    uint64

	requests map[key]*entry
	// Pending requests (state pending, due or not) by session, agent and team.
	bySession map[string]map[*entry]struct{}
	byAgent   map[string]map[*entry]struct{}
	byTeam    map[string]map[*entry]struct{}
	// expiry holds every request the reaper has not claimed yet: the pending
	// ones and the ones a transition expired after their deadline.
	expiry deadlines[*entry]
	// purge holds settled, reported requests by the end of their retention.
	purge deadlines[*entry]

	stops         map[string]session.StopSignal // session id → its stop signal
	sessionGrants map[string]*grantList
	grantExpiry   deadlines[string] // session id by grant expiry
	agentGrants   map[string]*grantList
	teamGrants    map[string]map[string]struct{} // team → owner refs (ownerRef)
	// removedGrants: ids of grants revoked or expired → until when AddGrant
	// refuses them (Retention after the removal).
	removedGrants map[string]time.Time
	// outbox holds the unacknowledged outbox entries, by request.
	outbox map[key]*obEntry
	// steps holds the scheduled escalation steps and page watches
	// (escalation.go).
	steps map[stepKey]*stepEntry
	// fleetStops and seen are the fleet's state (fleet.go): stops by id,
	// last seen by agent id.
	fleetStops map[string]messages.FleetStop
	seen       map[string]messages.AgentSeen
	// breakers are the outbreak breakers' counts and trips (breakers.go).
	breakers breakerState
}

type key struct{ session, id string }

type entry struct {
	rec    session.Record
	expiry *timer[*entry] // in Store.expiry until claimed
	purge  *timer[*entry] // in Store.purge once settled and reported
}

// grantList is the grants of one session or agent, in creation order.
type grantList struct {
	grants []session.Grant
	expiry *timer[string] // session lists: Retention after their last use
}

var _ session.Store = (*Store)(nil)

// New returns an empty store.
func New(opts Options) *Store {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Retention <= 0 {
		opts.Retention = session.DefaultRetention
	}
	if opts.EffectLease <= 0 {
		opts.EffectLease = session.DefaultEffectLease
	}
	return &Store{
		clock:         opts.Clock,
		retention:     opts.Retention,
		effectLease:   opts.EffectLease,
		outbox:        make(map[key]*obEntry),
		steps:         make(map[stepKey]*stepEntry),
		requests:      make(map[key]*entry),
		bySession:     make(map[string]map[*entry]struct{}),
		byAgent:       make(map[string]map[*entry]struct{}),
		byTeam:        make(map[string]map[*entry]struct{}),
		stops:         make(map[string]session.StopSignal),
		sessionGrants: make(map[string]*grantList),
		agentGrants:   make(map[string]*grantList),
		teamGrants:    make(map[string]map[string]struct{}),
		removedGrants: make(map[string]time.Time),
	}
}

// lock takes the mutex and returns the store time, after dropping what
// outlived its retention. It fails without locking when ctx is done or the
// store is closed.
func (s *Store) lock(ctx context.Context, op string) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, fmt.Errorf("memstore: %s: %w", op, err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return time.Time{}, fmt.Errorf("memstore: %s: store is closed: %w", op, session.ErrUnavailable)
	}
	now := s.clock()
	s.gc(now)
	return now, nil
}

// lockClaim is lock for a claim of up to limit, which it checks first.
func (s *Store) lockClaim(ctx context.Context, op string, limit int) (time.Time, error) {
	if err := session.CheckClaimLimit(limit); err != nil {
		return time.Time{}, fmt.Errorf("memstore: %s: %w", op, err)
	}
	return s.lock(ctx, op)
}

// lockKey is lock for op on one request, whose key it checks first.
func (s *Store) lockKey(ctx context.Context, op, sessionID, requestID string) (time.Time, error) {
	if err := session.CheckKey(sessionID, requestID); err != nil {
		return time.Time{}, fmt.Errorf("memstore: %s: %w", op, err)
	}
	return s.lock(ctx, op)
}

// lockSettle is lock for op, which settles open requests of sessionID with
// mk's decisions (Stop, CancelSession): mk is required.
func (s *Store) lockSettle(ctx context.Context, op, sessionID string, mk func(*session.Record) messages.Decision) (time.Time, error) {
	if mk == nil {
		return time.Time{}, fmt.Errorf("memstore: %s %s: %w: decision func is nil", op, sessionID, session.ErrInvalid)
	}
	return s.lock(ctx, op)
}

// gc drops requests past their retention and session grants past their
// expiry. Each drop costs O(log n), paid once.
func (s *Store) gc(now time.Time) {
	for t := s.purge.popDue(now); t != nil; t = s.purge.popDue(now) {
		delete(s.requests, key{t.v.rec.SessionID, t.v.rec.ID})
	}
	for t := s.grantExpiry.popDue(now); t != nil; t = s.grantExpiry.popDue(now) {
		delete(s.sessionGrants, t.v)
	}
}

func (s *Store) nextSeq() uint64 {
	s.seq++
	return s.seq
}

// Now returns the store's clock.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	now, err := s.lock(ctx, "now")
	if err != nil {
		return time.Time{}, err
	}
	s.mu.Unlock()
	return now, nil
}

// Ping reports ErrUnavailable once the store is closed.
func (s *Store) Ping(ctx context.Context) error {
	if _, err := s.lock(ctx, "ping"); err != nil {
		return err
	}
	s.mu.Unlock()
	return nil
}

// Close drops every record; later calls fail with ErrUnavailable. It is
// idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	// The maps are emptied, not replaced: callers read the index fields
	// before they take the lock (and then find the store closed).
	clear(s.requests)
	clear(s.bySession)
	clear(s.byAgent)
	clear(s.byTeam)
	clear(s.stops)
	clear(s.sessionGrants)
	clear(s.agentGrants)
	clear(s.teamGrants)
	clear(s.removedGrants)
	clear(s.steps)
	s.expiry, s.purge, s.grantExpiry = deadlines[*entry]{}, deadlines[*entry]{}, deadlines[string]{}
	return nil
}

// byKey returns the values of m in the order of their keys: the fleet
// stops by id, the agents seen by agent id, the breaker trips by breaker,
// as each map is keyed.
func byKey[V any](m map[string]V) []V {
	var out []V
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}
