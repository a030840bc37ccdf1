package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
)

// Rules of the procedure, moved from internal/broker's end-to-end tests
// (grants_quorum_test.go, answer_test.go, idempotency_test.go): they need
// no transport.

// quorumPolicy routes helm to oncall (two approvals) and helm upgrade of
// prod to oncall with three. Its program table declares helm complete and
// without effects (runs_code: false: the built-in entry counts helm
// upgrade as changing a release, granted only exactly), so that an
// approval grants the prefix `helm upgrade *`
// and one grant settles several questions (a command the table does not
// know completely is granted only exactly: TestAlwaysOnRmRfBuildDoesNotGrantOtherDeletes).
const quorumPolicy = `
mode: auto-edit
programs:
  helm: { arity: 2, complete: true, subcommands: { upgrade: { arity: 2, complete: true, runs_code: false } } }
teams:
  default: { members: [alice, bob] }
  oncall:  { members: [carol, dave, erin], approvals_required: 2 }
rules:
  - { rule: "bash(helm *)", action: ask, route: oncall, grantable: true }
  - { rule: "bash(helm upgrade prod*)", action: ask, route: oncall, grantable: true, approvals_required: 3 }
`

func (r *rig) grants(t *testing.T, q session.GrantQuery) []session.Grant {
	t.Helper()
	gs, err := r.store.ListGrants(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

func approverIDsOf(g session.Grant) []string {
	var ids []string
	for _, a := range g.Approvers {
		ids = append(ids, a.ID)
	}
	return ids
}

// wantPending fails unless the request is stored pending and undecided.
func (r *rig) wantPending(t *testing.T, req *messages.Request, why string) {
	t.Helper()
	rec, err := r.store.Get(t.Context(), req.SessionID, req.RequestID)
	if err != nil || rec.State != messages.StatePending {
		t.Fatalf("%s: %s is %+v, %v; want pending", why, req.RequestID, rec, err)
	}
	if d, ok := r.rec.decisionFor(req.RequestID); ok {
		t.Fatalf("%s: %s was decided: %+v", why, req.RequestID, d)
	}
}

// A standing answer on a quorum question records a grant only when every
// counted approver chose it (or a wider one: always stands behind
// session); the grant names them all and settles the team's later
// questions of as many approvals, not those that need more.
func TestQuorumGrants(t *testing.T) {
	t.Run("once and session: approved once, no grant", func(t *testing.T) {
		r := newRig(t, quorumPolicy, nil, nil)
		first := bash("s-q-once", "q-once-1", "helm upgrade web ./chart")
		r.request(t, first)
		r.respond(t, first, "carol", true, messages.ScopeOnce, "")
		rep := r.respond(t, first, "dave", true, messages.ScopeSession, "")
		if !rep.Applied || rep.Decision == nil || rep.Decision.ReasonCode != messages.ReasonApproved || rep.Decision.Scope != messages.ScopeOnce {
			t.Fatalf("decision %+v, want approved once", rep.Decision)
		}
		if gs := r.grants(t, session.GrantQuery{SessionID: "s-q-once"}); len(gs) != 0 {
			t.Errorf("grants = %+v, want none", gs)
		}
		next := bash("s-q-once", "q-once-2", "helm upgrade api ./chart")
		r.request(t, next)
		r.wantPending(t, next, "no grant was recorded")
	})

	t.Run("session and session: a grant of both settles the next quorum-2 question", func(t *testing.T) {
		r := newRig(t, quorumPolicy, nil, nil)
		first := bash("s-q-both", "q-both-1", "helm upgrade web ./chart")
		r.request(t, first)
		if rep := r.respond(t, first, "carol", true, messages.ScopeSession, ""); !rep.Applied || rep.State != messages.StatePending {
			t.Fatalf("carol's session approval: %+v", rep)
		}
		d := r.respond(t, first, "dave", true, messages.ScopeSession, "").Decision
		if d == nil || d.Scope != messages.ScopeSession || !slices.Equal(d.GrantedPattern, []string{"helm upgrade *"}) {
			t.Fatalf("decision %+v, want session [helm upgrade *]", d)
		}
		gs := r.grants(t, session.GrantQuery{SessionID: "s-q-both"})
		if len(gs) != 1 || gs[0].Scope != messages.ScopeSession || !slices.Equal(approverIDsOf(gs[0]), []string{"carol", "dave"}) ||
			!slices.Equal(gs[0].Teams, []string{"oncall"}) {
			t.Fatalf("grants = %+v, want one session grant of oncall by carol and dave", gs)
		}
		next := receiptOf(r.request(t, bash("s-q-both", "q-both-2", "helm upgrade api ./chart"))).Decision
		if next == nil || next.ReasonCode != messages.ReasonScopeGrant || next.DecidedBy.ID != gs[0].ID {
			t.Fatalf("next: %+v, want a scope_grant allow by grant %s", next, gs[0].ID)
		}
		// A question that needs three approvals is not settled by two.
		three := bash("s-q-both", "q-both-3", "helm upgrade prod-db ./chart")
		if res := r.request(t, three); res.Receipt().State != messages.StatePending {
			t.Fatalf("quorum-3 question: %+v", res.Receipt())
		}
		if q := r.rec.asks[len(r.rec.asks)-1]; q.ApprovalsRequired != 3 {
			t.Fatalf("approvals_required = %d, want 3", q.ApprovalsRequired)
		}
		r.wantPending(t, three, "a two-approver grant on a quorum-3 question")
	})

	t.Run("always and session: a session grant of both", func(t *testing.T) {
		r := newRig(t, quorumPolicy, nil, nil)
		first := bash("s-q-mixed", "q-mixed-1", "helm upgrade web ./chart")
		first.AgentID = "pod-q-3"
		r.request(t, first)
		r.respond(t, first, "carol", true, messages.ScopeAlways, "")
		d := r.respond(t, first, "dave", true, messages.ScopeSession, "").Decision
		if d == nil || d.ReasonCode != messages.ReasonApproved || d.Scope != messages.ScopeSession {
			t.Fatalf("decision %+v, want approved with scope session", d)
		}
		gs := r.grants(t, session.GrantQuery{SessionID: "s-q-mixed"})
		if len(gs) != 1 || gs[0].Scope != messages.ScopeSession || !slices.Equal(approverIDsOf(gs[0]), []string{"carol", "dave"}) {
			t.Fatalf("grants = %+v, want one session grant by carol and dave", gs)
		}
		if gs := r.grants(t, session.GrantQuery{AgentID: "pod-q-3"}); len(gs) != 0 {
			t.Errorf("grants of the agent = %+v, want none: dave did not choose always", gs)
		}
		next := bash("s-q-mixed", "q-mixed-2", "helm upgrade api ./chart")
		next.AgentID = "pod-q-3"
		if d := receiptOf(r.request(t, next)).Decision; d == nil || d.ReasonCode != messages.ReasonScopeGrant {
			t.Fatalf("next: %+v, want a scope_grant allow", d)
		}
	})
}

const answerPolicy = `
mode: auto-edit
tools:
  answer: [ask_human]
rules:
  - { rule: AskUserQuestion, action: ask, grantable: true } # even so, no standing answer
  - { rule: ask_human, action: ask }
teams:
  default: { members: [alice, bob] }
`

const dbQuestion = `{"questions":[{"question":"Which database?","header":"DB","options":[{"label":"Postgres"},{"label":"Mongo"}],"multiSelect":false}]}`

func call(sessionID, id, tool, args string) *messages.Request {
	return &messages.Request{V: messages.Version, RequestID: id, SessionID: sessionID, AgentID: "pod-1", Tool: tool,
		Arguments: json.RawMessage(args)}
}

func (r *rig) respondWith(t *testing.T, resp messages.Response) messages.RespondReply {
	t.Helper()
	resp.V = messages.Version
	rep, err := r.eng.Respond(t.Context(), &resp)
	if err != nil {
		t.Fatalf("Respond: %v", err)
	}
	return rep
}

func TestAnAnswerCannotStandForAToolsOutput(t *testing.T) {
	r := newRig(t, answerPolicy, nil, nil)
	req := bash("s-fabricate", "fab-1", "make deploy")
	req.RequestedBy = ""
	r.request(t, req)
	if q := r.rec.asks[0]; q.AskUser != nil {
		t.Fatalf("bash is marked ask-user: %+v", q.AskUser)
	}
	alice := messages.Approver{ID: "alice", Channel: "test"}
	rep := r.respondWith(t, messages.Response{RequestID: "fab-1", SessionID: "s-fabricate", Approver: alice, Approved: true,
		Answer: json.RawMessage(`"deployed OK"`), Digest: r.rec.shown(t, "fab-1")})
	if rep.Applied || !strings.Contains(rep.Reason, "not an ask-user tool") {
		t.Fatalf("an answer for bash: %+v", rep)
	}
	r.wantPending(t, req, "a refused answer")
	if rep := r.respond(t, req, "alice", true, messages.ScopeOnce, ""); !rep.Applied || len(rep.Decision.Answer) != 0 {
		t.Fatalf("a plain approval after the refused answer: %+v", rep)
	}
}

// An edit of an ask-user tool's call (its questions) is refused, with or
// without an answer — the answer stands for the questions shown, and the
// hook would have two meanings for updatedInput — and the question stays
// open for its answer.
func TestAnAskUserQuestionIsNotApprovedWithChanges(t *testing.T) {
	r := newRig(t, answerPolicy, nil, nil)
	alice := messages.Approver{ID: "alice", Channel: "test"}
	edit := json.RawMessage(`{"questions":[{"question":"Drop the database?","header":"DB","options":[{"label":"Yes"},{"label":"No"}],"multiSelect":false}]}`)
	for _, tool := range []string{"AskUserQuestion", "ask_human"} {
		id := "ask-edit-" + tool
		req := call("s-ask-edit", id, tool, dbQuestion)
		r.request(t, req)
		for _, answer := range []string{"", `{"Drop the database?":"Yes"}`, `{"Which database?":"Postgres"}`} {
			resp := messages.Response{RequestID: id, SessionID: "s-ask-edit", Approver: alice, Approved: true, UpdatedArguments: edit, Digest: r.rec.shown(t, id)}
			if answer != "" {
				resp.Answer = json.RawMessage(answer)
			}
			if rep := r.respondWith(t, resp); rep.Applied || !strings.Contains(rep.Reason, "ask-user") || rep.State != messages.StatePending {
				t.Fatalf("%s: an edit (answer %q) was not refused: %+v", tool, answer, rep)
			}
		}
		r.wantPending(t, req, tool+": a refused edit")
		if tool == "AskUserQuestion" {
			rep := r.respondWith(t, messages.Response{RequestID: id, SessionID: "s-ask-edit", Approver: alice, Approved: true,
				Answer: json.RawMessage(`{"Which database?":"Postgres"}`), Digest: r.rec.shown(t, id)})
			if !rep.Applied || len(rep.Decision.UpdatedArguments) != 0 || string(rep.Decision.Answer) != `{"Which database?":"Postgres"}` {
				t.Fatalf("the answer after the refused edits: %+v", rep)
			}
		}
	}
}

// A retried request id whose content differs from the stored request is an
// invalid_request naming the conflict; the same request again (arguments
// reordered or re-spaced included) gets the stored receipt (DESIGN §3,
// issue 14 item 5).
func TestARetryWithDifferentContentIsAConflict(t *testing.T) {
	r := newRig(t, testPolicy, nil, nil)
	const first = `{"v":1,"request_id":"idem-1","session_id":"s-idem","agent_id":"pod-1","tool":"bash","arguments":{"command":"make deploy","timeout":5}}`
	decode := func(raw string) *messages.Request {
		req, err := messages.Decode[messages.Request]([]byte(raw), 64<<10)
		if err != nil {
			t.Fatal(err)
		}
		return &req
	}
	if res := r.request(t, decode(first)); res.Receipt().State != messages.StatePending {
		t.Fatalf("first attempt: %+v, want pending", res.Receipt())
	}
	tests := []struct {
		name    string
		retry   string
		differs string // "" for the same request
	}{
		{"the same bytes are a retry", first, ""},
		{"the same arguments reordered and re-spaced are a retry",
			`{"v":1,"request_id":"idem-1","session_id":"s-idem","agent_id":"pod-1","tool":"bash","arguments":{ "timeout":5, "command":"make deploy" }}`, ""},
		{"another command is a conflict",
			`{"v":1,"request_id":"idem-1","session_id":"s-idem","agent_id":"pod-1","tool":"bash","arguments":{"command":"rm -rf /tmp/x","timeout":5}}`, "arguments"},
		{"another tool is a conflict",
			`{"v":1,"request_id":"idem-1","session_id":"s-idem","agent_id":"pod-1","tool":"shell","arguments":{"command":"make deploy","timeout":5}}`, "tool"},
		{"another agent is a conflict",
			`{"v":1,"request_id":"idem-1","session_id":"s-idem","agent_id":"pod-2","tool":"bash","arguments":{"command":"make deploy","timeout":5}}`, "agent_id"},
		{"an added field is a conflict",
			`{"v":1,"request_id":"idem-1","session_id":"s-idem","agent_id":"pod-1","tool":"bash","arguments":{"command":"make deploy","timeout":5},"description":"deploy"}`, "description"},
		// A number no float64 holds once made the comparison give up and
		// hand the stored receipt to any content (red team, issue 25).
		{"another command beside a number no float64 holds is a conflict",
			`{"v":1,"request_id":"idem-1","session_id":"s-idem","agent_id":"pod-1","tool":"bash","arguments":{"command":"rm -rf /etc","timeout":5,"pad":1e999}}`, "arguments"},
		{"the same command with a number no float64 holds added is a conflict",
			`{"v":1,"request_id":"idem-1","session_id":"s-idem","agent_id":"pod-1","tool":"bash","arguments":{"command":"make deploy","timeout":5e999}}`, "arguments"},
		// A repeated key decodes to its last value in Go, but a tool that
		// reads the first would run a command nobody saw.
		{"a repeated key before the stored one is a conflict",
			`{"v":1,"request_id":"idem-1","session_id":"s-idem","agent_id":"pod-1","tool":"bash","arguments":{"command":"rm -rf ~","command":"make deploy","timeout":5}}`, "arguments"},
		{"the same number written otherwise is a conflict (compared as written)",
			`{"v":1,"request_id":"idem-1","session_id":"s-idem","agent_id":"pod-1","tool":"bash","arguments":{"command":"make deploy","timeout":5.0}}`, "arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.eng.Request(t.Context(), decode(tc.retry))
			if tc.differs == "" {
				if err != nil || res.Receipt().RequestID != "idem-1" || res.Receipt().State != messages.StatePending {
					t.Fatalf("retry: %+v, %v; want the stored pending receipt", res.Receipt(), err)
				}
				return
			}
			rep := messages.ErrorReplyFor(err)
			if err == nil || rep.Error.Code != messages.CodeInvalidRequest || res.Label != "conflict" {
				t.Fatalf("retry: %v (label %s), want invalid_request", err, res.Label)
			}
			if msg := rep.Error.Message; !strings.Contains(msg, `"idem-1"`) || !strings.Contains(msg, tc.differs+" differs") {
				t.Fatalf("message %q, want it to name the request id and %q", msg, tc.differs)
			}
		})
	}
	// Nested: the stored request's object again is a retry, with a key
	// repeated before its value it is not.
	const nested = `{"v":1,"request_id":"idem-2","session_id":"s-idem","agent_id":"pod-1","tool":"bash","arguments":{"command":"make","env":{"A":"1","B":"2"}}}`
	if res := r.request(t, decode(nested)); res.Receipt().State != messages.StatePending {
		t.Fatalf("first attempt: %+v, want pending", res.Receipt())
	}
	if res, err := r.eng.Request(t.Context(), decode(`{"v":1,"request_id":"idem-2","session_id":"s-idem","agent_id":"pod-1","tool":"bash","arguments":{"env":{"B":"2","A":"1"},"command":"make"}}`)); err != nil || res.Receipt().State != messages.StatePending {
		t.Fatalf("the nested object reordered: %+v, %v; want the stored pending receipt", res.Receipt(), err)
	}
	if _, err := r.eng.Request(t.Context(), decode(`{"v":1,"request_id":"idem-2","session_id":"s-idem","agent_id":"pod-1","tool":"bash","arguments":{"command":"make","env":{"A":"x; rm -rf ~","A":"1","B":"2"}}}`)); err == nil ||
		messages.ErrorReplyFor(err).Error.Code != messages.CodeInvalidRequest {
		t.Fatalf("a key repeated in a nested object: %v, want invalid_request", err)
	}
	// The conflicting retries changed nothing: the question is still the
	// first one, pending.
	rec, err := r.store.Get(t.Context(), "s-idem", "idem-1")
	if err != nil || rec.State != messages.StatePending || !strings.Contains(string(rec.Question.Request.Arguments), "make deploy") {
		t.Fatalf("stored request after conflicts: %+v, %v", rec, err)
	}
}

// unreadableQuestion is a store whose records' questions cannot be read.
type unreadableQuestion struct{ session.Store }

func (s unreadableQuestion) Get(ctx context.Context, sessionID, requestID string) (*session.Record, error) {
	rec, err := s.Store.Get(ctx, sessionID, requestID)
	if err == nil {
		rec.QuestionErr = errors.New("damaged payload")
	}
	return rec, err
}

// A pending request whose stored question cannot be read is never
// approved: the response is an internal error that names the request and
// the cause, and the request stays pending (its expiry denies it).
// internal/broker's TestAnUnreadableQuestionIsNeverApproved damages a
// record in Redis for the same rule end to end.
func TestAnUnreadableQuestionIsNeverApproved(t *testing.T) {
	store := memstore.New(memstore.Options{})
	r := newRig(t, testPolicy, unreadableQuestion{store}, nil)
	req := bash("s-bad", "bad-1", "make deploy")
	r.request(t, req)
	_, err := r.eng.Respond(t.Context(), &messages.Response{V: 1, RequestID: "bad-1", SessionID: "s-bad",
		Approver: messages.Approver{ID: "bob", Channel: "test"}, Approved: true})
	var re *engine.ReplyError
	if !errors.As(err, &re) || re.Code != messages.CodeInternal || !strings.Contains(re.Message, "bad-1") || !strings.Contains(re.Message, "damaged payload") {
		t.Fatalf("approval of a request with an unreadable question: %v, want an internal error naming bad-1 and the cause", err)
	}
	r.wantPending(t, req, "an unreadable question")
}
