package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

// gate is a hook that, once armed, holds the first round trip until it is
// opened, counts round trips and the commands in each, and refuses
// pipelines while refuse is set (without sending them: a client-side
// failure).
type gate struct {
	held   chan struct{} // closed when the first round trip is held
	open   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	armed  bool
	sizes  []int // commands per armed round trip of Lookups (not a new connection's HELLO)
	refuse error
}

func (g *gate) arm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = true
}

func (g *gate) isArmed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.armed
}

func newGate() *gate { return &gate{held: make(chan struct{}), open: make(chan struct{})} }

func (g *gate) wait() {
	if !g.isArmed() {
		return
	}
	first := false
	g.once.Do(func() { first = true })
	if first {
		close(g.held)
		<-g.open
	}
}

func (g *gate) DialHook(next redis.DialHook) redis.DialHook { return next }

func (g *gate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		g.wait()
		g.mu.Lock()
		if g.armed && cmd.Name() == "mget" {
			g.sizes = append(g.sizes, 1)
		}
		g.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (g *gate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		g.wait()
		g.mu.Lock()
		if g.armed && cmds[0].Name() == "mget" {
			g.sizes = append(g.sizes, len(cmds))
		}
		refuse := g.refuse
		g.mu.Unlock()
		if refuse != nil {
			return refuse
		}
		return next(ctx, cmds)
	}
}

func (g *gate) roundTrips() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.sizes...)
}

// gatedStore returns a store whose reads are coalesced once limit round
// trips are in flight, and its gate, to be armed once the test's data is
// in place.
func gatedStore(t *testing.T, limit int) (*redisstore.Store, *gate) {
	t.Helper()
	srv := testenv.Redis(t)
	g := newGate()
	c := storeClient(t, srv.Addr())
	c.AddHook(g)
	return newStore(t, redisstore.Options{Client: c, ReadRoundTrips: limit}), g
}

// stoppedSessions creates n sessions, each stopped with its own reason.
func stoppedSessions(t *testing.T, s *redisstore.Store, n int) []string {
	t.Helper()
	sessions := make([]string, n)
	for i := range sessions {
		sessions[i] = uniq("sess")
		if _, err := s.Stop(context.Background(), sessions[i], session.StopSignal{Reason: "reason of " + sessions[i]}, denyAll); err != nil {
			t.Fatal(err)
		}
	}
	return sessions
}

// waitQueued waits until n Lookups wait for a round trip.
func waitQueued(t *testing.T, s *redisstore.Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for redisstore.QueuedReads(s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d Lookups queued, want %d", redisstore.QueuedReads(s), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestLookupsQueuedBehindARoundTripGoOutTogether(t *testing.T) {
	s, g := gatedStore(t, 1)
	sessions := stoppedSessions(t, s, 41)
	g.arm()
	ctx := context.Background()

	type answer struct {
		l   session.Lookup
		err error
	}
	answers := make([]answer, len(sessions))
	var wg sync.WaitGroup
	lookup := func(i int) {
		defer wg.Done()
		q := session.LookupQuery{SessionID: sessions[i], RequestID: uniq("req"), AgentID: "a-" + sessions[i], SkipGrants: i%2 == 0}
		answers[i].l, answers[i].err = s.Lookup(ctx, q)
	}
	wg.Add(1)
	go lookup(0)
	<-g.held // the first Lookup's round trip is in flight
	for i := 1; i < len(sessions); i++ {
		wg.Add(1)
		go lookup(i)
	}
	waitQueued(t, s, len(sessions)-1)
	close(g.open)
	wg.Wait()

	for i, a := range answers {
		if a.err != nil {
			t.Fatalf("Lookup %d: %v", i, a.err)
		}
		if want := "reason of " + sessions[i]; !a.l.Stopped || a.l.StopReason != want {
			t.Errorf("Lookup %d = stopped %v, %q; want %q (another session's answer?)", i, a.l.Stopped, a.l.StopReason, want)
		}
	}
	// The first alone (one MGET), then the 40 others in one pipeline: 20
	// MGETs alone, 20 with their TIME and the session's and the agent's
	// grants (GETEX, PEXPIRE, HGETALL; GET, HGETALL).
	if got := g.roundTrips(); len(got) != 2 || got[0] != 1 || got[1] != 20+20*7 {
		t.Errorf("round trips (commands in each) = %v, want [1 160]", got)
	}
	// A lone Lookup again goes out at once, on its own.
	if _, err := s.Lookup(ctx, session.LookupQuery{SessionID: sessions[0], SkipGrants: true}); err != nil {
		t.Fatal(err)
	}
	if got := g.roundTrips(); len(got) != 3 || got[2] != 1 {
		t.Errorf("round trips after a lone Lookup = %v, want a third of 1 command", got)
	}
}

func TestAQueuedLookupEndsWithItsContextAndFailsClosed(t *testing.T) {
	s, g := gatedStore(t, 1)
	sess := stoppedSessions(t, s, 1)[0]
	g.arm()
	q := session.LookupQuery{SessionID: sess, SkipGrants: true}

	first := make(chan error, 1)
	go func() {
		_, err := s.Lookup(context.Background(), q)
		first <- err
	}()
	<-g.held
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	l, err := s.Lookup(ctx, q)
	if !errors.Is(err, session.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) || l.Stopped {
		t.Fatalf("queued Lookup past its deadline = %+v, %v; want ErrUnavailable with the deadline", l, err)
	}
	close(g.open)
	if err := <-first; err != nil {
		t.Fatalf("the Lookup in flight: %v", err)
	}
	// The abandoned commands were still sent (their results dropped); the
	// store serves on.
	if l, err := s.Lookup(context.Background(), q); err != nil || !l.Stopped {
		t.Fatalf("Lookup afterwards = %+v, %v; want the stop", l, err)
	}
}

func TestARoundTripThatFailsFailsEveryLookupInIt(t *testing.T) {
	s, g := gatedStore(t, 1)
	sessions := stoppedSessions(t, s, 9)
	g.arm()
	refused := errors.New("connection pool timeout (injected)")

	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	lookup := func(i int) {
		defer wg.Done()
		_, errs[i] = s.Lookup(context.Background(), session.LookupQuery{SessionID: sessions[i], SkipGrants: true})
	}
	wg.Add(1)
	go lookup(0)
	<-g.held
	for i := 1; i < len(sessions); i++ {
		wg.Add(1)
		go lookup(i)
	}
	waitQueued(t, s, len(sessions)-1)
	g.mu.Lock()
	g.refuse = refused // the batch's pipeline fails before reaching Redis
	g.mu.Unlock()
	close(g.open)
	wg.Wait()

	if errs[0] != nil {
		t.Errorf("the Lookup sent alone: %v", errs[0])
	}
	for i, err := range errs[1:] {
		if !errors.Is(err, session.ErrUnavailable) || !errors.Is(err, refused) {
			t.Errorf("Lookup %d in the failed batch = %v; want ErrUnavailable with the cause", i+1, err)
		}
	}
}

func TestManyConcurrentLookupsEachGetTheirOwnAnswer(t *testing.T) {
	srv := testenv.Redis(t)
	s := newStore(t, redisstore.Options{URL: srv.URL(), ReadRoundTrips: 1})
	ctx := context.Background()
	const sessions, workers, each = 32, 16, 200
	stopped := map[string]bool{}
	names := make([]string, sessions)
	for i := range names {
		names[i] = uniq("sess")
		if i%3 == 0 {
			if _, err := s.Stop(ctx, names[i], session.StopSignal{Reason: "stop " + names[i]}, denyAll); err != nil {
				t.Fatal(err)
			}
			stopped[names[i]] = true
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				sess := names[(w*7+i)%sessions]
				l, err := s.Lookup(ctx, session.LookupQuery{SessionID: sess, RequestID: uniq("req"), SkipGrants: i%2 == 0})
				if err == nil && (l.Stopped != stopped[sess] || (l.Stopped && l.StopReason != "stop "+sess)) {
					err = fmt.Errorf("session %s: stopped %v %q, want %v", sess, l.Stopped, l.StopReason, stopped[sess])
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
