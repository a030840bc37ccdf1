package storetest

import (
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// backendTests cover Now, Ping, Close, context cancellation and argument
// checks that need no expiry.
func (r *runner) backendTests() []test {
	return []test{
		{"Now follows the store's clock forward", testNow},
		{"Ping answers while the store is open", testPing},
		{"Close is idempotent and every later call fails with ErrUnavailable", testClose},
		{"A call with a cancelled context fails and changes nothing", testCancelledContext},
		{"ClaimExpired and ClaimEffects reject a limit below 1", testClaimLimit},
	}
}

func testNow(t *testing.T, e *env) {
	a := e.now(t)
	time.Sleep(30 * time.Millisecond)
	b := e.now(t)
	if d := b.Sub(a); d < 20*time.Millisecond || d > 5*time.Second {
		t.Errorf("Now moved %v over a 30ms sleep", d)
	}
}

func testPing(t *testing.T, e *env) {
	if err := e.backend.Ping(e.ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

func testClose(t *testing.T, e *env) {
	rec := e.create(t, e.request(e.name("sess")))
	if err := e.backend.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := e.backend.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	mk := (&mkRecorder{}).mk
	calls := map[string]func() error{
		"Ping": func() error { return e.backend.Ping(e.ctx) },
		"Now":  func() error { _, err := e.backend.Now(e.ctx); return err },
		"Get":  func() error { _, err := e.requests.Get(e.ctx, rec.SessionID, rec.ID); return err },
		"Prepare": func() error {
			_, _, err := e.requests.Prepare(e.ctx, e.request(rec.SessionID))
			return err
		},
		"Open": func() error { _, err := e.requests.Open(e.ctx, rec.SessionID, rec.ID); return err },
		"Lookup": func() error {
			_, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: rec.SessionID, RequestID: rec.ID})
			return err
		},
		"Decide": func() error {
			_, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, approve(rec, "ann"))
			return err
		},
		"Settle": func() error {
			_, err := e.requests.Settle(e.ctx, rec.SessionID, rec.ID, messages.StateCancelled, decision(rec, messages.OutcomeDeny, messages.ReasonCancelled, "agent"))
			return err
		},
		"ListPendingSession": func() error { _, err := e.pending.ListPendingSession(e.ctx, rec.SessionID); return err },
		"ListPendingAgent":   func() error { _, err := e.pending.ListPendingAgent(e.ctx, rec.AgentID); return err },
		"ListPendingTeam":    func() error { _, err := e.pending.ListPendingTeam(e.ctx, rec.Teams[0]); return err },
		"AddGrant": func() error {
			_, _, _, err := e.grants.AddGrant(e.ctx, e.sessionGrant(rec.SessionID, "write"))
			return err
		},
		"ListGrants": func() error {
			_, err := e.grants.ListGrants(e.ctx, session.GrantQuery{SessionID: rec.SessionID})
			return err
		},
		"RevokeGrant": func() error {
			_, err := e.grants.RevokeGrant(e.ctx, e.sessionGrant(rec.SessionID, "write"))
			return err
		},
		"RevokeGrants": func() error { _, err := e.grants.RevokeGrants(e.ctx, rec.SessionID, ""); return err },
		"ExpireGrants": func() error { _, err := e.grants.ExpireGrants(e.ctx, []string{"default"}); return err },
		"Stop": func() error {
			_, err := e.sessions.Stop(e.ctx, rec.SessionID, session.StopSignal{Reason: "stop"}, mk)
			return err
		},
		"NewTurn":       func() error { _, err := e.sessions.NewTurn(e.ctx, rec.SessionID, session.Turn{}); return err },
		"CancelSession": func() error { _, err := e.sessions.CancelSession(e.ctx, rec.SessionID, nil, mk); return err },
		"ClaimExpired":  func() error { _, err := e.expiry.ClaimExpired(e.ctx, 10); return err },
		"ClaimEffects":  func() error { _, err := e.outbox.ClaimEffects(e.ctx, 10); return err },
		"AckEffects":    func() error { return e.outbox.AckEffects(e.ctx, rec) },
	}
	for name, call := range calls {
		wantErr(t, name+" after Close", call(), session.ErrUnavailable)
	}
}

func testCancelledContext(t *testing.T, e *env) {
	ctx := ctxCancelled()
	req := e.request(e.name("sess"))
	if _, _, err := e.requests.Prepare(ctx, req); err == nil {
		t.Fatal("Prepare with a cancelled context succeeded")
	}
	if l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: req.SessionID, RequestID: req.ID, SkipGrants: true}); err != nil || l.Existing != nil {
		t.Fatalf("Lookup after a cancelled Prepare: %s, %v; want nothing stored", describe(l.Existing), err)
	}

	rec := e.create(t, req)
	if _, err := e.requests.Decide(ctx, rec.SessionID, rec.ID, deny(rec, "ann")); err == nil {
		t.Fatal("Decide with a cancelled context succeeded")
	}
	if got := e.get(t, rec); got.State != messages.StatePending {
		t.Errorf("record after a cancelled Decide is %s, want pending", got.State)
	}
}

func testClaimLimit(t *testing.T, e *env) {
	for _, limit := range []int{0, -1} {
		_, err := e.expiry.ClaimExpired(e.ctx, limit)
		wantErr(t, "ClaimExpired", err, session.ErrInvalid)
		_, err = e.outbox.ClaimEffects(e.ctx, limit)
		wantErr(t, "ClaimEffects", err, session.ErrInvalid)
	}
}
