package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

func TestEveryMethodWorksAfterScriptFlush(t *testing.T) {
	srv := testenv.Redis(t)
	admin := srv.Client()
	s := newStore(t, options(srv.URL(), time.Minute))
	ctx := context.Background()
	rec := mustCreate(t, s, request(uniq("sess"), time.Minute))

	for _, m := range everyMethod(s, rec) {
		if err := admin.ScriptFlush(ctx).Err(); err != nil {
			t.Fatalf("SCRIPT FLUSH: %v", err)
		}
		if err := m.call(ctx); err != nil {
			t.Errorf("%s after SCRIPT FLUSH: %v", m.name, err)
		}
	}
	rec2 := mustCreate(t, s, request(uniq("sess"), time.Minute))
	if got, err := s.Get(ctx, rec2.SessionID, rec2.ID); err != nil || got.State != messages.StatePending {
		t.Fatalf("Get after reload = %v, %v", got, err)
	}
}

func TestNoscriptRetryResendsOnlyTheUnknownScripts(t *testing.T) {
	srv := testenv.Redis(t)
	rec := &recorder{}
	c := storeClient(t, srv.Addr())
	c.AddHook(rec)
	s := newStore(t, redisstore.Options{Client: c})
	ctx := context.Background()
	mustPrepare(t, s, request(uniq("sess"), time.Minute))
	rec.take()

	if err := srv.Client().ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	mustPrepare(t, s, request(uniq("sess"), time.Minute))
	trips, cmds := rec.take()
	want := []string{"EVALSHA", "EVALSHA", "EVALSHA", "EVALSHA", "EVAL", "EVAL", "EVAL", "EVAL"}
	if trips != 2 || !slices.Equal(names(cmds), want) {
		t.Errorf("Prepare after SCRIPT FLUSH sent %v in %d calls, want %v in 2", names(cmds), trips, want)
	}
	mustPrepare(t, s, request(uniq("sess"), time.Minute))
	if trips, cmds := rec.take(); trips != 1 || !slices.Equal(names(cmds), want[:4]) {
		t.Errorf("next Prepare sent %v in %d calls, want %v in one: EVAL cached the scripts", names(cmds), trips, want[:4])
	}
}

func TestHotPathLookupIsOneRoundTrip(t *testing.T) {
	srv := testenv.Redis(t)
	rec := &recorder{}
	c := storeClient(t, srv.Addr())
	c.AddHook(rec)
	s := newStore(t, redisstore.Options{Client: c})
	ctx := context.Background()
	sess := uniq("sess")
	r := mustCreate(t, s, request(sess, time.Minute))
	if _, _, _, err := s.AddGrant(ctx, testGrant(uniq("g"), messages.ScopeSession, sess, "write")); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.AddGrant(ctx, testGrant(uniq("g"), messages.ScopeAlwaysPrefix, r.AgentID, "bash", "git push *")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		q    session.LookupQuery
		cmds []string
	}{
		{"a new request with an agent", session.LookupQuery{SessionID: sess, RequestID: uniq("req"), AgentID: r.AgentID}, []string{"MGET", "TIME", "GETEX", "PEXPIRE", "HGETALL", "GET", "HGETALL"}},
		{"a retry of a stored request", session.LookupQuery{SessionID: sess, RequestID: r.ID, AgentID: r.AgentID}, []string{"MGET", "TIME", "GETEX", "PEXPIRE", "HGETALL", "GET", "HGETALL"}},
		{"a session without an agent", session.LookupQuery{SessionID: sess}, []string{"MGET", "TIME", "GETEX", "PEXPIRE", "HGETALL"}},
		{"a call whose tool and programs are known reads their buckets", session.LookupQuery{SessionID: sess, RequestID: r.ID, AgentID: r.AgentID,
			Tool: "bash", Programs: []string{"git"}, ProgramsKnown: true}, []string{"MGET", "TIME", "GETEX", "PEXPIRE", "HMGET", "GET", "HMGET"}},
		{"an allow or a deny, which needs no grants", session.LookupQuery{SessionID: sess, RequestID: r.ID, AgentID: r.AgentID, SkipGrants: true}, []string{"MGET"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.take()
			l, err := s.Lookup(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			want := 1
			if tc.q.AgentID != "" {
				want = 2
			}
			if tc.q.SkipGrants {
				want = 0
			}
			if tc.q.Tool == "bash" {
				want = 1 // the agent's git grant, not the session's write grant
			}
			if len(l.Grants) != want {
				t.Errorf("Grants = %+v, want %d", l.Grants, want)
			}
			if tc.q.RequestID == r.ID && l.Existing == nil {
				t.Error("the stored record is missing")
			}
			trips, cmds := rec.take()
			if trips != 1 || !slices.Equal(names(cmds), tc.cmds) {
				t.Errorf("Lookup sent %v in %d calls, want %v in one", names(cmds), trips, tc.cmds)
			}
		})
	}
}

func TestPrepareIsOneRoundTrip(t *testing.T) {
	srv := testenv.Redis(t)
	rec := &recorder{}
	c := storeClient(t, srv.Addr())
	c.AddHook(rec)
	s := newStore(t, redisstore.Options{Client: c})
	mustCreate(t, s, request(uniq("sess"), time.Minute)) // dials the pipeline connection
	req := request(uniq("sess"), time.Minute)
	req.Teams = []string{"ops", "sec"}
	rec.take()
	mustPrepare(t, s, req)
	trips, cmds := rec.take()
	// create, due mark, agent index, two team indexes.
	if want := []string{"EVALSHA", "EVALSHA", "EVALSHA", "EVALSHA", "EVALSHA"}; trips != 1 || !slices.Equal(names(cmds), want) {
		t.Errorf("Prepare sent %v in %d calls, want %v in one", names(cmds), trips, want)
	}
}

// TestScriptKeysShareOneSlot checks with Redis's own CLUSTER KEYSLOT that
// the keys of every script call, and the key prefixes it gets as
// arguments, fall in one hash slot. (The conformance run on Redis Cluster
// checks the keys scripts build themselves.)
func TestScriptKeysShareOneSlot(t *testing.T) {
	srv := testenv.Redis(t, testenv.WithCluster())
	rec := &recorder{}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{srv.Addr()}, ContextTimeoutEnabled: true, MaxRetries: -1, DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	c.OnNewNode(func(n *redis.Client) { n.AddHook(rec) })
	c.AddHook(rec)
	s := newStore(t, redisstore.Options{Client: c, Retention: time.Minute})
	ctx := context.Background()

	r := mustCreate(t, s, request(uniq("sess"), time.Minute))
	for _, m := range everyMethod(s, r) {
		if err := m.call(ctx); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
	}
	short := mustCreate(t, s, request(uniq("sess"), 50*time.Millisecond))
	time.Sleep(100 * time.Millisecond)
	if got, err := s.ClaimExpired(ctx, 10); err != nil || !slices.ContainsFunc(got, func(x *session.Record) bool { return x.ID == short.ID }) {
		t.Fatalf("ClaimExpired = %v, %v; want the short request", got, err)
	}

	_, cmds := rec.take()
	admin := srv.ClusterClient()
	slot := func(key string) int64 {
		n, err := admin.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatalf("CLUSTER KEYSLOT %s: %v", key, err)
		}
		return n
	}
	scripts := 0
	for _, args := range cmds {
		name := strings.ToUpper(fmt.Sprint(args[0]))
		if name != "EVALSHA" && name != "EVAL" {
			continue
		}
		scripts++
		numKeys, err := strconv.Atoi(fmt.Sprint(args[2]))
		if err != nil || numKeys < 1 {
			t.Errorf("%s declares %v keys, want at least one", name, args[2])
			continue
		}
		want := slot(fmt.Sprint(args[3]))
		for i := 3; i < len(args); i++ {
			k, ok := args[i].(string)
			if !ok {
				continue // numbers, encoded decisions
			}
			if (i < 3+numKeys || strings.HasPrefix(k, "signoff:")) && slot(k) != want {
				t.Errorf("script call %v: %q is in slot %d, its first key in %d", args[3:], k, slot(k), want)
			}
		}
	}
	if scripts < 20 {
		t.Fatalf("recorded %d script calls, want the whole workload", scripts)
	}
}

// hangBound is how long a call may take past OpTimeout in the failure
// tests: enough for a loaded CI machine, far below what a hanging call
// would take (go-redis's default timeouts are 5 s, a frozen server never
// answers).
const hangBound = time.Second

func TestEveryMethodFailsUnavailableWhileRedisIsDownAndRecovers(t *testing.T) {
	srv := testenv.Redis(t)
	const opTimeout = 500 * time.Millisecond
	s := newStore(t, redisstore.Options{URL: srv.URL(), OpTimeout: opTimeout})
	rec := mustCreate(t, s, request(uniq("sess"), time.Minute))

	srv.Stop()
	checkUnavailable(t, "with Redis down", everyMethod(s, rec), opTimeout)

	srv.Start() // no persistence: an empty Redis on the same port
	checkRecovers(t, s)
}

func TestEveryMethodTimesOutWhileRedisIsFrozen(t *testing.T) {
	srv := testenv.Redis(t)
	const opTimeout = 300 * time.Millisecond
	s := newStore(t, redisstore.Options{URL: srv.URL(), OpTimeout: opTimeout})
	rec := mustCreate(t, s, request(uniq("sess"), time.Minute))

	srv.Pause()
	checkUnavailable(t, "with Redis frozen", everyMethod(s, rec), opTimeout)
	srv.Resume()
	checkRecovers(t, s)
}

func checkUnavailable(t *testing.T, when string, methods []method, opTimeout time.Duration) {
	t.Helper()
	for _, m := range methods {
		start := time.Now()
		err := m.call(context.Background())
		took := time.Since(start)
		if !errors.Is(err, session.ErrUnavailable) {
			t.Errorf("%s %s: err = %v, want ErrUnavailable", m.name, when, err)
		}
		if took > opTimeout+hangBound {
			t.Errorf("%s %s took %v, want about OpTimeout %v", m.name, when, took, opTimeout)
		}
	}
}

// checkRecovers waits until the store answers again (Redis may first work
// through the commands queued while it was frozen), then checks that every
// method works.
func checkRecovers(t *testing.T, s *redisstore.Store) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.Ping(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the store did not answer within 10s after Redis came back")
		}
		time.Sleep(20 * time.Millisecond)
	}
	rec := mustCreate(t, s, request(uniq("sess"), time.Minute))
	for _, m := range everyMethod(s, rec) {
		if err := m.call(context.Background()); err != nil {
			t.Errorf("%s after Redis came back: %v", m.name, err)
		}
	}
}

func TestCallerDeadlineShorterThanOpTimeoutWins(t *testing.T) {
	srv := testenv.Redis(t)
	s := newStore(t, redisstore.Options{URL: srv.URL(), OpTimeout: 10 * time.Second})
	srv.Pause()
	defer srv.Resume()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Now(ctx)
	if !errors.Is(err, session.ErrUnavailable) {
		t.Errorf("Now past the caller's deadline: err = %v, want ErrUnavailable", err)
	}
	if took := time.Since(start); took > 100*time.Millisecond+hangBound {
		t.Errorf("Now took %v with a 100ms deadline and a 10s OpTimeout", took)
	}
}

func TestNewFailsUnavailableWithoutRedis(t *testing.T) {
	srv := testenv.Redis(t)
	addr := srv.Addr()
	srv.Stop()
	_, err := redisstore.New(context.Background(), redisstore.Options{URL: "redis://" + addr, OpTimeout: 300 * time.Millisecond})
	if !errors.Is(err, session.ErrUnavailable) {
		t.Fatalf("New without Redis: err = %v, want ErrUnavailable", err)
	}
}

func TestRecordLifetimes(t *testing.T) {
	srv := testenv.Redis(t)
	admin := srv.Client()
	const retention = 2 * time.Second
	s := newStore(t, options(srv.URL(), retention))
	ctx := context.Background()
	sess := uniq("sess")
	pending := mustCreate(t, s, request(sess, time.Minute))
	denied := mustCreate(t, s, request(sess, time.Minute))
	// Long enough for the two steps of a create on a loaded machine.
	due := mustCreate(t, s, request(sess, 300*time.Millisecond))
	lateVote := mustCreate(t, s, request(sess, 300*time.Millisecond))
	if _, err := s.Decide(ctx, sess, denied.ID, session.Vote{ApproverID: "ann"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	if res, err := s.Decide(ctx, sess, lateVote.ID, session.Vote{ApproverID: "ann", Approve: true}); err != nil || res.Applied {
		t.Fatalf("late vote = %+v, %v; want refused", res, err)
	}

	pttl := func(rec *session.Record) time.Duration {
		t.Helper()
		d, err := admin.PTTL(ctx, "signoff:{"+sess+"}:r:"+rec.ID).Result()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	tests := []struct {
		name     string
		rec      *session.Record
		lo, hi   time.Duration
		whyLimit string
	}{
		{"a pending request has no TTL", pending, -1, -1, "the reaper settles it"},
		{"a request expired by a late vote keeps no TTL until it is claimed", lateVote, -1, -1, "the reaper must still report it"},
		{"a due request not yet claimed has no TTL", due, -1, -1, "the reaper must still report it"},
		{"a settled request lives for the retention", denied, retention - time.Second, retention, "retention counts from DecidedAt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pttl(tc.rec); got < tc.lo || got > tc.hi {
				t.Errorf("PTTL = %v, want in [%v, %v]: %s", got, tc.lo, tc.hi, tc.whyLimit)
			}
		})
	}

	claimed, err := s.ClaimExpired(ctx, 100)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("ClaimExpired = %v, %v; want the two due requests", claimed, err)
	}
	for _, r := range []*session.Record{due, lateVote} {
		if got := pttl(r); got <= retention-time.Second || got > retention {
			t.Errorf("claimed %s has PTTL %v, want about the retention %v", r.ID, got, retention)
		}
	}
	if l, err := admin.Exists(ctx, "signoff:{"+sess+"}:exp").Result(); err != nil || l != 1 {
		t.Errorf("expiry index of a session with a pending request: exists = %d, %v", l, err)
	}

	// Past the retention the settled and claimed records are gone; the
	// pending one stays.
	time.Sleep(retention + 200*time.Millisecond)
	for _, r := range []*session.Record{denied, due, lateVote} {
		if _, err := s.Get(ctx, sess, r.ID); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("Get(%s) past the retention: err = %v, want ErrNotFound", r.ID, err)
		}
	}
	if got, err := s.Get(ctx, sess, pending.ID); err != nil || got.State != messages.StatePending {
		t.Errorf("pending request after the retention = %v, %v", got, err)
	}
}

func TestSessionGrantsExpireAgentGrantsAndStopStay(t *testing.T) {
	srv := testenv.Redis(t)
	admin := srv.Client()
	const retention = 3 * time.Second
	s := newStore(t, options(srv.URL(), retention))
	ctx := context.Background()
	sess, agent := uniq("sess"), uniq("agent")
	if _, _, _, err := s.AddGrant(ctx, testGrant(uniq("g"), messages.ScopeSession, sess, "write")); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.AddGrant(ctx, testGrant(uniq("g"), messages.ScopeAlways, agent, "bash")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stop(ctx, sess, session.StopSignal{Reason: "stop"}, denyAll); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string][2]time.Duration{
		"signoff:{" + sess + "}:grants:b":        {retention - time.Second, retention},
		"signoff:agent:{" + agent + "}:grants:b": {-1, -1},
		"signoff:{" + sess + "}:stop":            {-1, -1},
	} {
		got, err := admin.PTTL(ctx, key).Result()
		if err != nil || got < want[0] || got > want[1] {
			t.Errorf("PTTL %s = %v, %v; want in [%v, %v]", key, got, err, want[0], want[1])
		}
	}
}

// TestExpiryFollowsRedisTimeOnly checks that nothing in the store reads
// the process clock, so the caller's idea of the time cannot matter: every
// time the store computes comes from Redis TIME inside a script.
func TestExpiryFollowsRedisTimeOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "time" {
				switch sel.Sel.Name {
				case "Now", "Since", "Until":
					t.Errorf("%s: time.%s: the store must take every time from Redis TIME", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
	if checked < 5 {
		t.Fatalf("checked %d source files, want the whole package", checked)
	}

	// And the times the store reports are Redis's: bracketed by TIME.
	srv := testenv.Redis(t)
	s := newStore(t, options(srv.URL(), time.Minute))
	ctx := context.Background()
	before, _ := srv.Client().Time(ctx).Result()
	rec := mustCreate(t, s, request(uniq("sess"), 150*time.Millisecond))
	after, _ := srv.Client().Time(ctx).Result()
	if rec.CreatedAt.Before(before) || rec.CreatedAt.After(after) {
		t.Errorf("CreatedAt %v outside Redis TIME [%v, %v]", rec.CreatedAt, before, after)
	}
	if got := rec.ExpiresAt.Sub(rec.CreatedAt); got != 150*time.Millisecond {
		t.Errorf("ExpiresAt - CreatedAt = %v, want the TTL", got)
	}
}

func TestIndexesForgetSessionsOnceTheirRequestsExpire(t *testing.T) {
	srv := testenv.Redis(t)
	admin := srv.Client()
	s := newStore(t, options(srv.URL(), time.Minute))
	ctx := context.Background()
	team := uniq("team")
	key := "signoff:team:{" + team + "}:sessions"
	mk := func(ttl time.Duration) *session.Record {
		req := request(uniq("sess"), ttl)
		req.Teams = []string{team}
		return mustCreate(t, s, req)
	}
	short := mk(100 * time.Millisecond)
	long := mk(time.Minute)
	if got, err := admin.ZRange(ctx, key, 0, -1).Result(); err != nil || !slices.Equal(sorted(got), sorted([]string{short.SessionID, long.SessionID})) {
		t.Fatalf("team index = %v, %v; want both sessions", got, err)
	}
	// Settled early, a request stays indexed (the list filters it out)
	// until its expiry has passed by the slack (1 s).
	if _, err := s.Settle(ctx, long.SessionID, long.ID, messages.StateCancelled, denyAll(long)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ListPendingTeam(ctx, team); err != nil || len(got) != 1 || got[0].ID != short.ID {
		t.Fatalf("ListPendingTeam = %v, %v; want only the short request", got, err)
	}
	time.Sleep(100*time.Millisecond + time.Second + 100*time.Millisecond)
	third := mk(time.Minute) // each add drops what has passed
	got, err := admin.ZRange(ctx, key, 0, -1).Result()
	if err != nil || !slices.Equal(sorted(got), sorted([]string{long.SessionID, third.SessionID})) {
		t.Errorf("team index after the short request's expiry = %v, %v; want %s and %s", got, err, long.SessionID, third.SessionID)
	}
	if pttl, err := admin.PTTL(ctx, key).Result(); err != nil || pttl < 59*time.Second || pttl > 61*time.Second {
		t.Errorf("team index PTTL = %v, %v; want the latest expiry plus the slack (about 61s)", pttl, err)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestAReaderRepairsALostSchedule(t *testing.T) {
	srv := testenv.Redis(t)
	admin := srv.Client()
	s := newStore(t, options(srv.URL(), time.Minute))
	ctx := context.Background()
	sess := uniq("sess")
	rec := mustCreate(t, s, request(sess, 50*time.Millisecond))
	// Lose the session's schedule, as a Create whose due-index write failed
	// would.
	for i := range 16 {
		if err := admin.ZRem(ctx, fmt.Sprintf("signoff:due:{%d}", i), sess).Err(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if got, err := s.ClaimExpired(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("ClaimExpired without a schedule = %v, %v; want nothing (the schedule is lost)", got, err)
	}
	if got, err := s.ListPendingSession(ctx, sess); err != nil || len(got) != 0 {
		t.Fatalf("ListPendingSession = %v, %v; want nothing open", got, err)
	}
	got, err := s.ClaimExpired(ctx, 10)
	if err != nil || len(got) != 1 || got[0].ID != rec.ID {
		t.Fatalf("ClaimExpired after a reader saw the due request = %v, %v; want it", got, err)
	}
}

// failOn is a hook that fails the pipelined commands whose script
// arguments name a key with the given infix, after Redis ran them: what a
// caller sees when a reply is lost. then, if set, runs between Redis's
// replies and the caller seeing the failure.
type failOn struct {
	infix string
	then  func()
}

func (f failOn) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (f failOn) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (f failOn) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			for _, a := range c.Args() {
				if s, ok := a.(string); ok && strings.Contains(s, f.infix) {
					c.SetErr(errors.New("i/o timeout (injected)"))
					if f.then != nil {
						f.then()
					}
				}
			}
		}
		return err
	}
}

func TestCreateRetractsARequestItCouldNotSchedule(t *testing.T) {
	srv := testenv.Redis(t)
	c := storeClient(t, srv.Addr())
	c.AddHook(failOn{infix: ":due:{"})
	s := newStore(t, redisstore.Options{Client: c})
	ctx := context.Background()
	req := request(uniq("sess"), time.Minute)

	_, created, err := s.Prepare(ctx, req)
	if err == nil || created {
		t.Fatalf("Prepare with a failed schedule = created %v, %v; want an error", created, err)
	}
	if _, err := s.Get(ctx, req.SessionID, req.ID); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Get after the failed Prepare: err = %v, want ErrNotFound (retracted)", err)
	}
}

// A Prepare whose indexes fail takes its held request back, but not one
// that an agent's retry opened (through another replica) in the meantime:
// that one was announced, and approvers may answer it.
func TestPrepareDoesNotRetractARequestOpenedMeanwhile(t *testing.T) {
	srv := testenv.Redis(t)
	other := newStore(t, options("redis://"+srv.Addr(), time.Hour))
	ctx := context.Background()
	req := request(uniq("sess"), time.Minute)
	opened := false
	c := storeClient(t, srv.Addr())
	c.AddHook(failOn{infix: ":due:{", then: func() {
		if opened {
			return
		}
		opened = true
		if res, err := other.Open(ctx, req.SessionID, req.ID); err != nil || !res.Applied {
			t.Errorf("Open by the retry = %+v, %v; want it applied", res, err)
		}
	}})
	s := newStore(t, redisstore.Options{Client: c})

	if _, created, err := s.Prepare(ctx, req); err == nil || created {
		t.Fatalf("Prepare with a failed schedule = created %v, %v; want an error", created, err)
	}
	rec, err := other.Get(ctx, req.SessionID, req.ID)
	if err != nil || rec.State != messages.StatePending {
		t.Fatalf("Get after the failed Prepare = %+v, %v; want the request the retry opened, pending", rec, err)
	}

	// Still held when the failure is seen: taken back.
	req2 := request(uniq("sess"), time.Minute)
	if _, _, err := s.Prepare(ctx, req2); err == nil {
		t.Fatal("second Prepare with a failed schedule succeeded")
	}
	look, err := other.Lookup(ctx, session.LookupQuery{SessionID: req2.SessionID, RequestID: req2.ID, SkipGrants: true})
	if err != nil || look.Existing != nil {
		t.Errorf("Lookup after a failed Prepare = %+v, %v; want nothing (retracted)", look.Existing, err)
	}
}

func TestUnreadableDataIsNotAnOutage(t *testing.T) {
	srv := testenv.Redis(t)
	s := newStore(t, options(srv.URL(), time.Minute))
	ctx := context.Background()
	sess := uniq("sess")
	if err := srv.Client().Set(ctx, "signoff:{"+sess+"}:r:x", "not a record", 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(ctx, sess, "x")
	if err == nil || errors.Is(err, session.ErrUnavailable) || errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Get of a foreign value: err = %v, want an unreadable-data error", err)
	}
}

func TestNamesThatCannotBeHashTagsAreInvalid(t *testing.T) {
	srv := testenv.Redis(t)
	s := newStore(t, options(srv.URL(), time.Minute))
	ctx := context.Background()
	for _, sess := range []string{"}sess", "a}:r:b", "sess-{1}"} {
		req := request(sess, time.Minute)
		if _, _, err := s.Prepare(ctx, req); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("Prepare in session %q: err = %v, want ErrInvalid", sess, err)
		}
		if _, err := s.Lookup(ctx, session.LookupQuery{SessionID: sess}); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("Lookup of session %q: err = %v, want ErrInvalid", sess, err)
		}
	}
	req := request("sess-{1", time.Minute)
	req.Teams = []string{"team-{x"}
	if _, _, err := s.Prepare(ctx, req); err != nil {
		t.Errorf("Prepare in session %q: %v ('{' is fine)", req.SessionID, err)
	}
	req = request(uniq("sess"), time.Minute)
	req.Teams = []string{"ops}"}
	if _, _, err := s.Prepare(ctx, req); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("Prepare routed to team %q: err = %v, want ErrInvalid", req.Teams[0], err)
	}
}

func TestOptionsAreValidated(t *testing.T) {
	tests := []struct {
		name string
		opts redisstore.Options
	}{
		{"no Redis at all", redisstore.Options{}},
		{"a URL and a client", redisstore.Options{URL: "redis://127.0.0.1:1", Client: redis.NewClient(&redis.Options{})}},
		{"sentinel addresses without a master", redisstore.Options{SentinelAddrs: []string{"127.0.0.1:26379"}}},
		{"a key prefix with a brace", redisstore.Options{URL: "redis://127.0.0.1:1", KeyPrefix: "so{x"}},
		{"a negative retention", redisstore.Options{URL: "redis://127.0.0.1:1", Retention: -time.Second}},
		{"a negative number of read round trips", redisstore.Options{URL: "redis://127.0.0.1:1", ReadRoundTrips: -1}},
		{"an unknown scheme", redisstore.Options{URL: "http://127.0.0.1:1"}},
		{"a sentinel URL without a master", redisstore.Options{URL: "redis+sentinel://127.0.0.1:26379"}},
		{"a sentinel URL with an unknown parameter", redisstore.Options{URL: "redis+sentinel://127.0.0.1:26379/mymaster?colour=blue"}},
		{"a sentinel URL with a bad database", redisstore.Options{URL: "redis+sentinel://127.0.0.1:26379/mymaster/x"}},
		{"a cluster URL with a database", redisstore.Options{URL: "redis+cluster://127.0.0.1:7000/1"}},
		{"a cluster URL with an empty host", redisstore.Options{URL: "redis+cluster://127.0.0.1:7000,"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := redisstore.New(context.Background(), tc.opts)
			if !errors.Is(err, session.ErrInvalid) {
				t.Fatalf("New: err = %v, want ErrInvalid", err)
			}
		})
	}
}

// TestOutOfMemoryRefusesNewStateButSettlesAndExpires checks the script
// flags: with Redis out of memory (maxmemory, noeviction), Create and
// AddGrant are refused as unavailable, while reads, votes, stops and the
// reaper go on, so pending requests can still be answered and expire.
func TestOutOfMemoryRefusesNewStateButSettlesAndExpires(t *testing.T) {
	srv := testenv.Redis(t, testenv.WithRedisArgs("--maxmemory-policy", "noeviction"))
	admin := srv.Client()
	s := newStore(t, options(srv.URL(), time.Minute))
	ctx := context.Background()
	sess := uniq("sess")
	voted := mustCreate(t, s, request(sess, time.Minute))
	due := mustCreate(t, s, request(sess, 50*time.Millisecond))
	stopped := mustCreate(t, s, request(sess, time.Minute))
	if err := admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.ConfigSet(ctx, "maxmemory", "0")
	time.Sleep(100 * time.Millisecond)

	if _, _, err := s.Prepare(ctx, request(sess, time.Minute)); !errors.Is(err, session.ErrUnavailable) || !strings.Contains(err.Error(), "OOM") {
		t.Errorf("Prepare out of memory: err = %v, want ErrUnavailable (OOM)", err)
	}
	if _, _, _, err := s.AddGrant(ctx, testGrant(uniq("g"), messages.ScopeSession, sess, "write")); !errors.Is(err, session.ErrUnavailable) {
		t.Errorf("AddGrant out of memory: err = %v, want ErrUnavailable", err)
	}
	if l, err := s.Lookup(ctx, session.LookupQuery{SessionID: sess, RequestID: voted.ID, AgentID: voted.AgentID}); err != nil || l.Existing == nil {
		t.Errorf("Lookup out of memory = %+v, %v; want it to work", l, err)
	}
	if res, err := s.Decide(ctx, sess, voted.ID, session.Vote{ApproverID: "ann", Approve: true}); err != nil || !res.Applied {
		t.Errorf("Decide out of memory = %+v, %v; want it applied", res, err)
	}
	if got, err := s.ClaimExpired(ctx, 10); err != nil || len(got) != 1 || got[0].ID != due.ID {
		t.Errorf("ClaimExpired out of memory = %v, %v; want the due request", got, err)
	}
	if got, err := s.Stop(ctx, sess, session.StopSignal{Reason: "stop"}, denyAll); err != nil || len(got) != 1 || got[0].ID != stopped.ID {
		t.Errorf("Stop out of memory = %v, %v; want the open request rejected", got, err)
	}
	if cleared, err := s.NewTurn(ctx, sess, session.Turn{}); err != nil || !cleared {
		t.Errorf("NewTurn out of memory = %v, %v", cleared, err)
	}
}
