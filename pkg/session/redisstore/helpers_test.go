package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
	"github.com/signoff-dev/signoff/pkg/session/storetest"
)

func TestMain(m *testing.M) {
	// The outage tests make go-redis log every failed dial; the tests
	// check the errors themselves.
	redis.SetLogger(quietLogger{})
	os.Exit(m.Run())
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func options(url string, retention time.Duration) redisstore.Options {
	return redisstore.Options{URL: url, Retention: retention}
}

// newStore opens a store and closes it with the test.
func newStore(t testing.TB, opts redisstore.Options) *redisstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := redisstore.New(ctx, opts)
	if err != nil {
		t.Fatalf("redisstore.New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// storeClient returns a client configured like the store's own (context
// deadlines honoured, no retries), for tests that inject it to watch the
// commands.
func storeClient(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr:                  addr,
		ContextTimeoutEnabled: true,
		MaxRetries:            -1,
		DisableIdentity:       true,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var idSeq struct {
	sync.Mutex
	n int
}

// uniq returns a fresh name for a role ("sess", "req"…).
func uniq(role string) string {
	idSeq.Lock()
	defer idSeq.Unlock()
	idSeq.n++
	return fmt.Sprintf("%s-%d-%d", role, os.Getpid(), idSeq.n)
}

// request returns a valid request of session sess.
func request(sess string, ttl time.Duration) session.Request {
	id := uniq("req")
	return session.Request{
		ID:                id,
		SessionID:         sess,
		AgentID:           "agent-" + sess,
		RequestedBy:       "alice",
		Tool:              "bash",
		Teams:             []string{"team-" + sess},
		ApprovalsRequired: 1,
		TTL:               ttl,
		Question:          messages.ApprovalNeeded{V: messages.Version, Type: "approval_needed", Request: messages.Request{RequestID: id, SessionID: sess, Tool: "bash"}},
	}
}

// mustCreate stores req pending: Prepare, then Open.
func mustCreate(t testing.TB, s session.Store, req session.Request) *session.Record {
	t.Helper()
	rec, created, err := storetest.Create(context.Background(), s, req)
	if err != nil || !created {
		t.Fatalf("Create(%s/%s) = created %v, %v", req.SessionID, req.ID, created, err)
	}
	return rec
}

// mustPrepare stores req held (one round trip).
func mustPrepare(t testing.TB, s session.Store, req session.Request) *session.Record {
	t.Helper()
	rec, created, err := s.Prepare(context.Background(), req)
	if err != nil || !created {
		t.Fatalf("Prepare(%s/%s) = created %v, %v", req.SessionID, req.ID, created, err)
	}
	return rec
}

func denyAll(rec *session.Record) messages.Decision {
	return messages.Decision{V: messages.Version, RequestID: rec.ID, SessionID: rec.SessionID, Outcome: messages.OutcomeDeny, ReasonCode: messages.ReasonHardStop}
}

// method is one Store call, for tests that go through all of them.
type method struct {
	name string
	call func(ctx context.Context) error
}

// everyMethod returns one call of each Store method (and NextExpiry) on
// fresh names in session sess, where rec is a pending request.
func everyMethod(s *redisstore.Store, rec *session.Record) []method {
	sess := rec.SessionID
	return []method{
		{"Lookup", func(ctx context.Context) error {
			_, err := s.Lookup(ctx, session.LookupQuery{SessionID: sess, RequestID: rec.ID, AgentID: rec.AgentID})
			return err
		}},
		{"Prepare", func(ctx context.Context) error { _, _, err := s.Prepare(ctx, request(sess, time.Minute)); return err }},
		{"Open", func(ctx context.Context) error { _, err := s.Open(ctx, sess, rec.ID); return err }},
		{"Get", func(ctx context.Context) error { _, err := s.Get(ctx, sess, rec.ID); return err }},
		{"Decide", func(ctx context.Context) error {
			_, err := s.Decide(ctx, sess, rec.ID, session.Vote{ApproverID: "ann", Approve: true})
			return err
		}},
		{"Settle", func(ctx context.Context) error {
			_, err := s.Settle(ctx, sess, rec.ID, messages.StateCancelled, denyAll(rec))
			return err
		}},
		{"ListPendingSession", func(ctx context.Context) error { _, err := s.ListPendingSession(ctx, sess); return err }},
		{"ListPendingAgent", func(ctx context.Context) error { _, err := s.ListPendingAgent(ctx, rec.AgentID); return err }},
		{"ListPendingTeam", func(ctx context.Context) error { _, err := s.ListPendingTeam(ctx, rec.Teams[0]); return err }},
		{"AddGrant session", func(ctx context.Context) error {
			_, _, _, err := s.AddGrant(ctx, testGrant(uniq("g"), messages.ScopeSession, sess, "write"))
			return err
		}},
		{"AddGrant agent", func(ctx context.Context) error {
			_, _, _, err := s.AddGrant(ctx, testGrant(uniq("g"), messages.ScopeAlwaysPrefix, rec.AgentID, "bash", "ls *"))
			return err
		}},
		{"ListGrants", func(ctx context.Context) error {
			_, err := s.ListGrants(ctx, session.GrantQuery{Teams: []string{"default"}})
			return err
		}},
		{"ExpireGrants", func(ctx context.Context) error { _, err := s.ExpireGrants(ctx, []string{"default"}); return err }},
		{"RevokeGrants", func(ctx context.Context) error { _, err := s.RevokeGrants(ctx, sess, rec.AgentID); return err }},
		{"CancelSession", func(ctx context.Context) error {
			_, err := s.CancelSession(ctx, sess, []string{rec.ID}, denyAll)
			return err
		}},
		{"Stop", func(ctx context.Context) error {
			_, err := s.Stop(ctx, sess, session.StopSignal{Reason: "stop"}, denyAll)
			return err
		}},
		{"NewTurn", func(ctx context.Context) error { _, err := s.NewTurn(ctx, sess, session.Turn{}); return err }},
		{"ClaimExpired", func(ctx context.Context) error { _, err := s.ClaimExpired(ctx, 100); return err }},
		{"NextExpiry", func(ctx context.Context) error { _, _, err := s.NextExpiry(ctx); return err }},
		{"Now", func(ctx context.Context) error { _, err := s.Now(ctx); return err }},
		{"Ping", func(ctx context.Context) error { return s.Ping(ctx) }},
	}
}

// recorder is a go-redis hook that records what the client sends: how many
// separate calls (single commands or pipelines, each one round trip per
// node) and every command's arguments.
type recorder struct {
	mu    sync.Mutex
	trips int
	cmds  [][]any
}

func (r *recorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *recorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.record(cmd)
		return next(ctx, cmd)
	}
}

func (r *recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.record(cmds...)
		return next(ctx, cmds)
	}
}

func (r *recorder) record(cmds ...redis.Cmder) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trips++
	for _, c := range cmds {
		r.cmds = append(r.cmds, c.Args())
	}
}

// take returns and resets what was recorded.
func (r *recorder) take() (trips int, cmds [][]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	trips, cmds = r.trips, r.cmds
	r.trips, r.cmds = 0, nil
	return trips, cmds
}

func names(cmds [][]any) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, strings.ToUpper(fmt.Sprint(c[0])))
	}
	return out
}

// testGrant builds a grant of the default team for owner, a session id
// (scope session) or an agent id.
func testGrant(id string, scope messages.Scope, owner, tool string, patterns ...string) session.Grant {
	g := session.Grant{Grant: messages.Grant{ID: id, Scope: scope, Tool: tool, Patterns: patterns, Teams: []string{"default"},
		Approvers: []messages.Approver{{ID: "alice"}}, RequestID: "r-" + id}}
	if scope == messages.ScopeSession {
		g.SessionID = owner
	} else {
		g.AgentID = owner
	}
	return g
}
