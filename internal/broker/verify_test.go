package broker_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
)

func userKey(t testing.TB) (nkeys.KeyPair, string) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	return kp, pub
}

// signAt signs r as of at with kp, claiming keyID. It follows
// docs/PROTOCOL.md on its own, apart from approverbot.NKeySigner, so that
// both are checked against the broker.
func signAt(t testing.TB, kp nkeys.KeyPair, keyID string, r *messages.Response, at time.Time) {
	t.Helper()
	r.V = messages.Version
	r.SignedAt = at.UTC()
	r.KeyID = keyID
	r.Signature = ""
	sig, err := kp.Sign(r.SigningBytes())
	if err != nil {
		t.Fatal(err)
	}
	r.Signature = messages.EncodeSignature(sig)
}

func TestVerifyResponse(t *testing.T) {
	kp, pub := userKey(t)
	other, otherPub := userKey(t)
	trusted := map[string]bool{pub: true}
	now := time.Date(2025, 5, 6, 7, 8, 9, 0, time.UTC)
	base := func() messages.Response {
		return messages.Response{V: 1, RequestID: "r1", SessionID: "s1", Approver: messages.Approver{ID: "alice", Channel: "web"},
			Approved: true, Scope: messages.ScopeSession}
	}
	signed := func(at time.Time) messages.Response {
		r := base()
		signAt(t, kp, pub, &r, at)
		return r
	}
	tests := []struct {
		name    string
		resp    func() messages.Response
		wantErr error
	}{
		{"a response signed now by a trusted key verifies", func() messages.Response { return signed(now) }, nil},
		{"a response signed 4 minutes ago verifies", func() messages.Response { return signed(now.Add(-4 * time.Minute)) }, nil},
		{"a response signed by a clock 4 minutes ahead verifies", func() messages.Response { return signed(now.Add(4 * time.Minute)) }, nil},
		{"an unsigned response is refused", base, broker.ErrUnsigned},
		{"a signature without key_id is refused", func() messages.Response { r := signed(now); r.KeyID = ""; return r }, broker.ErrUnsigned},
		{"a signature without signed_at is refused", func() messages.Response { r := signed(now); r.SignedAt = time.Time{}; return r }, broker.ErrUnsigned},
		{"key_id and signed_at without a signature are refused", func() messages.Response { r := signed(now); r.Signature = ""; return r }, broker.ErrUnsigned},
		{"a signature by an untrusted key is refused", func() messages.Response {
			r := base()
			signAt(t, other, otherPub, &r, now)
			return r
		}, broker.ErrUntrustedKey},
		{"another key's signature claiming the trusted key_id is refused", func() messages.Response {
			r := base()
			signAt(t, other, pub, &r, now)
			return r
		}, broker.ErrBadSignature},
		{"flipping approved after signing is refused", func() messages.Response {
			r := signed(now)
			r.Approved, r.Scope, r.RejectMode = false, "", messages.RejectHard
			return r
		}, broker.ErrBadSignature},
		{"widening the scope after signing is refused", func() messages.Response {
			r := signed(now)
			r.Scope = messages.ScopeAlways
			return r
		}, broker.ErrBadSignature},
		{"moving the answer to another request is refused", func() messages.Response {
			r := signed(now)
			r.RequestID = "r2"
			return r
		}, broker.ErrBadSignature},
		{"changing the approver is refused", func() messages.Response {
			r := signed(now)
			r.Approver.ID = "mallory"
			return r
		}, broker.ErrBadSignature},
		{"moving signed_at after signing is refused", func() messages.Response {
			r := signed(now.Add(-10 * time.Minute))
			r.SignedAt = now
			return r
		}, broker.ErrBadSignature},
		{"a signature that is not base64url is refused", func() messages.Response {
			r := signed(now)
			r.Signature = strings.Repeat("*", len(r.Signature))
			return r
		}, broker.ErrBadSignature},
		{"a response signed 6 minutes ago is stale", func() messages.Response { return signed(now.Add(-6 * time.Minute)) }, broker.ErrStaleSignature},
		{"a response signed 6 minutes in the future is refused", func() messages.Response { return signed(now.Add(6 * time.Minute)) }, broker.ErrStaleSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.resp()
			err := broker.VerifyResponse(&r, trusted, now, broker.DefaultSignatureMaxSkew)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || !errors.Is(err, messages.ErrForbidden) {
				t.Fatalf("err = %v, want %v (forbidden)", err, tc.wantErr)
			}
		})
	}
}

func TestParseApproverKeys(t *testing.T) {
	_, k1 := userKey(t)
	_, k2 := userKey(t)
	acct, _ := nkeys.CreateAccount()
	acctPub, _ := acct.PublicKey()
	seedKP, _ := userKey(t)
	seed, _ := seedKP.Seed()
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		spec    string
		want    []string
		wantErr string
	}{
		{"an empty spec gives no keys", "  ", nil, ""},
		{"one key", k1, []string{k1}, ""},
		{"a comma-separated list", k1 + ", " + k2, []string{k1, k2}, ""},
		{"a file with comments and blank lines", file("keys", "# approver bots\n"+k1+"  # web\n\n"+k2+"\r\n"), []string{k1, k2}, ""},
		{"a list with a bad key names it", k1 + ",UNOTAKEY", nil, `"UNOTAKEY" is not a public user nkey`},
		{"an account key is not a user key", k1 + "," + acctPub, nil, "is not a public user nkey"},
		{"a file with a seed names its line", file("seed", "# bot\n"+string(seed)+"\n"), nil, "line 2"},
		{"a missing file", filepath.Join(dir, "nope"), nil, "neither a list of public user nkeys"},
		{"an empty file", file("empty", "# nothing yet\n"), nil, "no keys found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := broker.ParseApproverKeys(tc.spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to say %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("keys = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBrokerConfigRefusesBadSignatureSettings(t *testing.T) {
	srv := testenv.NATS(t, testenv.WithoutJetStream())
	nc := srv.Connect(t)
	pol := broker.StaticPolicy{P: policy.Default()}
	_, pub := userKey(t)
	tests := []struct {
		name string
		cfg  broker.Config
		want string
	}{
		{"required signatures need keys", broker.Config{RequireSignedResponses: true}, "needs ApproverKeys"},
		{"a key must be a public user nkey", broker.Config{ApproverKeys: []string{pub, "SUAI"}}, "not a public user nkey"},
		{"a skew under a second is refused", broker.Config{ApproverKeys: []string{pub}, SignatureMaxSkew: time.Millisecond}, "too small"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Conn, tc.cfg.Store, tc.cfg.Policy = nc, memstore.New(memstore.Options{}), pol
			if _, err := broker.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

const signedPolicy = `
mode: auto-edit
rules:
  - { rule: "bash(kubectl *)", action: ask, route: oncall }
teams:
  default: { members: [alice, bob] }
  oncall:  { members: [carol, dave], approvals_required: 2 }
`

// signedPlane is an approval plane whose brokers require signed responses.
type signedPlane struct {
	t        *testing.T
	store    *memstore.Store
	pol      *policy.Policy
	keys     []string
	required bool
	asks     chan messages.ApprovalNeeded
	// servers[i] has one broker replica; all share store.
	servers []*testenv.NATSServer
}

func startSignedPlane(t *testing.T, replicas int, required bool, keys ...string) *signedPlane {
	t.Helper()
	pol, err := policy.Parse([]byte(signedPolicy), "signed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := &signedPlane{t: t, store: memstore.New(memstore.Options{}), pol: pol, keys: keys, required: required,
		asks: make(chan messages.ApprovalNeeded, 16)}
	for range replicas {
		srv := testenv.NATS(t, testenv.WithoutJetStream())
		p.servers = append(p.servers, srv)
		p.startBroker(srv)
	}
	nc := p.servers[0].Connect(t)
	if _, err := nc.Subscribe(messages.Subjects{}.AskAll(), func(m *nats.Msg) {
		var q messages.ApprovalNeeded
		if json.Unmarshal(m.Data, &q) == nil {
			p.asks <- q
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *signedPlane) startBroker(srv *testenv.NATSServer) {
	t := p.t
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("SIGNOFF_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	b, err := broker.New(broker.Config{
		Conn:                   srv.Connect(t),
		Store:                  p.store,
		Policy:                 broker.StaticPolicy{P: p.pol},
		Logger:                 log,
		DisableAudit:           true,
		DisableReaper:          true,
		RequireSignedResponses: p.required,
		ApproverKeys:           p.keys,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(10 * time.Second)
	for b.Ready(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("broker not ready: %v", b.Ready(context.Background()))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ask sends a request that needs a human from a new agent on server 0 and
// returns it once its question is out.
func (p *signedPlane) ask(session, id, command string) (*brokertest.Pending, messages.ApprovalNeeded) {
	p.t.Helper()
	c, err := client.New(p.servers[0].Connect(p.t), client.WithSession(session), client.WithAgent("pod-"+session))
	if err != nil {
		p.t.Fatal(err)
	}
	pending := brokertest.Ask(context.Background(), c, id, "bash", brokertest.Bash(command))
	timeout := time.After(5 * time.Second)
	for {
		select {
		case q := <-p.asks:
			if q.Request.RequestID == id {
				return pending, q
			}
		case <-timeout:
			p.t.Fatalf("no question for %s", id)
		}
	}
}

// respond sends r to the broker of server i as is and returns the reply:
// exactly one of the two results is set.
func (p *signedPlane) respond(i int, r messages.Response) (*messages.RespondReply, *messages.ErrorReply) {
	p.t.Helper()
	nc := p.servers[i].Connect(p.t)
	defer nc.Close()
	data, err := json.Marshal(r)
	if err != nil {
		p.t.Fatal(err)
	}
	msg, err := nc.Request(messages.Subjects{}.Respond(), data, 5*time.Second)
	if err != nil {
		p.t.Fatalf("respond: %v", err)
	}
	if e, ok := messages.IsErrorReply(msg.Data); ok {
		return nil, e
	}
	var rep messages.RespondReply
	if err := json.Unmarshal(msg.Data, &rep); err != nil {
		p.t.Fatalf("respond reply %s: %v", msg.Data, err)
	}
	return &rep, nil
}

func (p *signedPlane) record(session, id string) *session.Record {
	p.t.Helper()
	rec, err := p.store.Get(context.Background(), session, id)
	if err != nil {
		p.t.Fatal(err)
	}
	return rec
}

func approval(q messages.ApprovalNeeded, who string) messages.Response {
	return messages.Response{V: 1, RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
		Approver: messages.Approver{ID: who, Channel: "test"}, Approved: true, Scope: messages.ScopeOnce, Digest: q.Digest}
}

func TestSignedResponsesRefuseForgeriesAndApplyTheGenuine(t *testing.T) {
	botKey, botPub := userKey(t)
	bot, err := approverbot.NewNKeySignerFromKeyPair(botKey)
	if err != nil {
		t.Fatal(err)
	}
	mallory, malloryPub := userKey(t)
	p := startSignedPlane(t, 1, true, botPub)

	pending, q := p.ask("s-signed", "sig-1", "make deploy")
	_, other := p.ask("s-signed-2", "sig-2", "make deploy")

	captured := approval(q, "alice")
	if err := bot.Sign(&captured); err != nil {
		t.Fatal(err)
	}

	refusals := []struct {
		name string
		resp func() messages.Response
		want string
	}{
		{"an unsigned response", func() messages.Response { return approval(q, "alice") }, "not signed"},
		{"a response signed by a key the broker does not trust", func() messages.Response {
			r := approval(q, "alice")
			signAt(t, mallory, malloryPub, &r, time.Now())
			return r
		}, "not a trusted approver key"},
		{"a forged signature claiming the bot's key", func() messages.Response {
			r := approval(q, "alice")
			signAt(t, mallory, botPub, &r, time.Now())
			return r
		}, "does not verify"},
		{"a rejection turned into an approval", func() messages.Response {
			r := approval(q, "alice")
			r.Approved, r.Scope, r.RejectMode = false, "", messages.RejectSoft
			if err := bot.Sign(&r); err != nil {
				t.Fatal(err)
			}
			r.Approved, r.Scope, r.RejectMode = true, messages.ScopeOnce, ""
			return r
		}, "does not verify"},
		{"an approval whose scope was widened", func() messages.Response {
			r := captured
			r.Scope = messages.ScopeAlways
			return r
		}, "does not verify"},
		{"an approval moved to another request", func() messages.Response {
			r := captured
			r.RequestID, r.SessionID = other.Request.RequestID, other.Request.SessionID
			return r
		}, "does not verify"},
		{"an approval given groups after signing", func() messages.Response {
			r := captured
			r.ApproverGroups = []string{"okta-sre"}
			return r
		}, "does not verify"},
		{"a stale approval", func() messages.Response {
			r := approval(q, "alice")
			signAt(t, botKey, botPub, &r, time.Now().Add(-6*time.Minute))
			return r
		}, "outside the accepted time window"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			rep, e := p.respond(0, tc.resp())
			if e == nil {
				t.Fatalf("applied=%v state=%s reason=%q: want a forbidden error reply", rep.Applied, rep.State, rep.Reason)
			}
			if e.Error.Code != messages.CodeForbidden || !strings.Contains(e.Error.Message, tc.want) {
				t.Fatalf("error reply %s: %s; want forbidden saying %q", e.Error.Code, e.Error.Message, tc.want)
			}
			for _, id := range [][2]string{{"s-signed", "sig-1"}, {"s-signed-2", "sig-2"}} {
				if rec := p.record(id[0], id[1]); rec.State != messages.StatePending || len(rec.Approvals) != 0 {
					t.Fatalf("%s is %s with approvals %v after a refused response", id[1], rec.State, rec.Approvals)
				}
			}
		})
	}

	rep, e := p.respond(0, captured)
	if e != nil {
		t.Fatalf("the genuine response was refused: %s: %s", e.Error.Code, e.Error.Message)
	}
	if !rep.Applied || rep.State != messages.StateApproved {
		t.Fatalf("genuine response: %+v", rep)
	}
	d := pending.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.DecidedBy.ID != "alice" {
		t.Fatalf("decided by %+v", d.DecidedBy)
	}

	// The same bytes again: refused as a replay, and the decision stands.
	_, e = p.respond(0, captured)
	if e == nil || e.Error.Code != messages.CodeForbidden || !strings.Contains(e.Error.Message, "replay") {
		t.Fatalf("replay: error reply %+v, want forbidden replay", e)
	}
	if rec := p.record("s-signed", "sig-1"); rec.State != messages.StateApproved || rec.Decision.DecidedBy.ID != "alice" {
		t.Fatalf("after the replay the record is %s by %+v", rec.State, rec.Decision)
	}
}

// A replayed quorum vote must not count twice, whichever replica it reaches:
// the replica that saw it refuses the replay, and one that did not (its own
// NATS server here, so the test picks the replica) verifies the signature
// but the store refuses a second vote of the same approver.
func TestReplayedQuorumVoteNeverCountsTwice(t *testing.T) {
	botKey, botPub := userKey(t)
	bot, err := approverbot.NewNKeySignerFromKeyPair(botKey)
	if err != nil {
		t.Fatal(err)
	}
	p := startSignedPlane(t, 2, true, botPub)
	pending, q := p.ask("s-quorum", "q-1", "kubectl delete pod web-1")
	if q.Team != "oncall" || q.ApprovalsRequired != 2 {
		t.Fatalf("question = team %s, %d approvals", q.Team, q.ApprovalsRequired)
	}

	vote := approval(q, "carol")
	if err := bot.Sign(&vote); err != nil {
		t.Fatal(err)
	}
	rep, e := p.respond(0, vote)
	if e != nil || !rep.Applied || rep.State != messages.StatePending {
		t.Fatalf("first vote: %+v %+v", rep, e)
	}

	if _, e := p.respond(0, vote); e == nil || !strings.Contains(e.Error.Message, "replay") {
		t.Fatalf("replay to the same replica: %+v, want a forbidden replay", e)
	}
	rep, e = p.respond(1, vote)
	if e != nil {
		t.Fatalf("replay to the other replica: error reply %s: %s", e.Error.Code, e.Error.Message)
	}
	if rep.Applied || rep.State != messages.StatePending || len(rep.ApprovalsSoFar) != 1 {
		t.Fatalf("replay to the other replica counted: %+v", rep)
	}
	// Carol signing again is not a replay, but still one vote.
	again := approval(q, "carol")
	if err := bot.Sign(&again); err != nil {
		t.Fatal(err)
	}
	if rep, e := p.respond(1, again); e != nil || rep.Applied {
		t.Fatalf("carol's second vote: %+v %+v", rep, e)
	}
	if rec := p.record("s-quorum", "q-1"); rec.State != messages.StatePending || len(rec.Approvals) != 1 {
		t.Fatalf("after replays the record is %s with %v", rec.State, rec.Approvals)
	}

	second := approval(q, "dave")
	if err := bot.Sign(&second); err != nil {
		t.Fatal(err)
	}
	rep, e = p.respond(0, second)
	if e != nil || !rep.Applied || rep.State != messages.StateApproved {
		t.Fatalf("dave's vote: %+v %+v", rep, e)
	}
	brokertest.WantDecision(t, pending.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
}

// While signatures are not required (a migration: keys configured first,
// then required), unsigned responses pass but a bad signature never does.
func TestConfiguredKeysCheckSignaturesEvenWhenNotRequired(t *testing.T) {
	_, botPub := userKey(t)
	mallory, _ := userKey(t)
	p := startSignedPlane(t, 1, false, botPub)
	pending, q := p.ask("s-migrate", "m-1", "make deploy")

	forged := approval(q, "alice")
	signAt(t, mallory, botPub, &forged, time.Now())
	if _, e := p.respond(0, forged); e == nil || e.Error.Code != messages.CodeForbidden {
		t.Fatalf("forged signature: %+v, want forbidden", e)
	}
	if rec := p.record("s-migrate", "m-1"); rec.State != messages.StatePending {
		t.Fatalf("the forged response decided: %s", rec.State)
	}
	rep, e := p.respond(0, approval(q, "alice"))
	if e != nil || !rep.Applied {
		t.Fatalf("unsigned response while not required: %+v %+v", rep, e)
	}
	brokertest.WantDecision(t, pending.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
}

// docs/PROTOCOL.md is what other languages implement signing from: its
// signed example must verify, and its refusal must be the broker's words.
func TestProtocolDocSignedResponseExampleVerifies(t *testing.T) {
	data, err := os.ReadFile("../../docs/PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	var example, refusal string
	for _, block := range strings.Split(string(data), "```json\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		switch {
		case strings.Contains(block, `"signature"`):
			example = block
		case strings.Contains(block, `"forbidden"`) && strings.Contains(block, "signature"):
			refusal = block
		}
	}
	if example == "" || refusal == "" {
		t.Fatal("docs/PROTOCOL.md shows no signed response or no signature refusal")
	}
	r, err := messages.Decode[messages.Response]([]byte(example), 0)
	if err != nil {
		t.Fatal(err)
	}
	trusted := map[string]bool{r.KeyID: true}
	if err := broker.VerifyResponse(&r, trusted, r.SignedAt.Add(time.Minute), broker.DefaultSignatureMaxSkew); err != nil {
		t.Fatalf("the documented signed response does not verify: %v", err)
	}
	r.Scope = messages.ScopeAlways
	err = broker.VerifyResponse(&r, trusted, r.SignedAt, broker.DefaultSignatureMaxSkew)
	var rep messages.ErrorReply
	if jerr := json.Unmarshal([]byte(refusal), &rep); jerr != nil {
		t.Fatal(jerr)
	}
	if err == nil || rep.Error.Message != err.Error() {
		t.Fatalf("documented refusal %q, broker says %v", rep.Error.Message, err)
	}
}

// BenchmarkVerifyResponse measures what a signed response adds to the
// broker's handling of it.
func BenchmarkVerifyResponse(b *testing.B) {
	kp, pub := userKey(b)
	r := messages.Response{V: 1, RequestID: "01JQ8Z6Q3W5R0V8K2M4N6P8R0T", SessionID: "sess-7f3a",
		Approver: messages.Approver{ID: "bob", Channel: "web"}, Approved: true, Scope: messages.ScopeSession}
	now := time.Now()
	signAt(b, kp, pub, &r, now)
	trusted := map[string]bool{pub: true}
	b.ReportAllocs()
	for b.Loop() {
		if err := broker.VerifyResponse(&r, trusted, now, broker.DefaultSignatureMaxSkew); err != nil {
			b.Fatal(err)
		}
	}
}
