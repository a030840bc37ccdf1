package webhook_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/webhook"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

func decodeReply(t *testing.T, data []byte) messages.RespondReply {
	t.Helper()
	var rep messages.RespondReply
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("reply %s: %v", data, err)
	}
	return rep
}

func decodeError(t *testing.T, data []byte) messages.ErrorReply {
	t.Helper()
	e, ok := messages.IsErrorReply(data)
	if !ok {
		t.Fatalf("not an error reply: %s", data)
	}
	return *e
}

func TestWebhookSignedRoundTrip(t *testing.T) {
	e := start(t)
	pend, _ := e.Ask(t, "r1", "make deploy")

	d := e.recv.next(t, "approval_needed", "r1")
	q, err := messages.Decode[messages.ApprovalNeeded](d.Body, 1<<20)
	if err != nil {
		t.Fatalf("the question is not a valid approval_needed message: %v", err)
	}
	if q.Type != "approval_needed" || q.Team != "default" || q.Request.Tool != "bash" || !strings.Contains(string(q.Request.Arguments), "make deploy") || q.ExpiresAt.IsZero() {
		t.Errorf("question %+v", q)
	}
	if d.Delivery == "" {
		t.Error("no delivery id")
	}

	status, body := e.respond(t, webhook.RespondRequest{RequestID: "r1", Approver: "alice", Approved: true, Scope: messages.ScopeSession, Device: "pager", Digest: q.Digest})
	if status != http.StatusOK {
		t.Fatalf("respond: %d %s", status, body)
	}
	rep := decodeReply(t, body)
	if !rep.Applied || rep.State != messages.StateApproved || rep.Decision == nil {
		t.Fatalf("reply %+v, want applied and approved", rep)
	}
	want := messages.Decider{Kind: messages.DeciderApprover, ID: "alice", Display: "Alice", Channel: "webhook", Device: "pager"}
	dec := pend.Wait(t)
	brokertest.WantDecision(t, dec, messages.OutcomeAllow, messages.ReasonApproved)
	if dec.Scope != messages.ScopeSession || dec.DecidedBy != want {
		t.Errorf("decision %s by %+v, want session by %+v", dec.Scope, dec.DecidedBy, want)
	}

	r := e.recv.next(t, "resolved", "r1")
	res, err := messages.Decode[messages.Resolved](r.Body, 1<<20)
	if err != nil {
		t.Fatalf("the resolution is not a valid resolved message: %v", err)
	}
	if res.State != messages.StateApproved || res.Decision.DecidedBy.ID != "alice" {
		t.Errorf("resolution %+v", res)
	}
}

func TestWebhookRefusesBadSignaturesAndReplaysAndDecidesNothing(t *testing.T) {
	e := start(t)
	pend, q := e.Ask(t, "r1", "make deploy")
	e.recv.next(t, "approval_needed", "r1")

	// Every refused request would approve the call for the session as alice.
	body, _ := json.Marshal(webhook.RespondRequest{RequestID: "r1", Approver: "alice", Approved: true, Scope: messages.ScopeSession, Digest: q.Digest})
	now := time.Now()
	otherSecret := http.Header{}
	webhook.Sign(otherSecret, "another-secret-of-16-bytes", now, body)
	sha1 := signed(body, now)
	sha1.Set(webhook.HeaderSignature, strings.Replace(sha1.Get(webhook.HeaderSignature), "sha256=", "sha1=", 1))
	retimed := signed(body, now.Add(-10*time.Minute))
	retimed.Set(webhook.HeaderTimestamp, signed(body, now).Get(webhook.HeaderTimestamp))
	cases := []struct {
		name   string
		body   []byte
		header http.Header
	}{
		{"a signature made with another secret", body, otherSecret},
		{"a changed body", []byte(strings.Replace(string(body), "alice", "bob", 1)), signed(body, now)},
		{"a timestamp six minutes old", body, signed(body, now.Add(-6*time.Minute))},
		{"a timestamp six minutes ahead", body, signed(body, now.Add(6*time.Minute))},
		{"a fresh timestamp on an old signature", body, retimed},
		{"another algorithm", body, sha1},
		{"no signature headers", body, http.Header{"Content-Type": {"application/json"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, answer := e.post(t, c.body, c.header)
			if status != http.StatusUnauthorized || decodeError(t, answer).Error.Code != messages.CodeForbidden {
				t.Errorf("status %d %s, want 401 with an error reply", status, answer)
			}
		})
	}

	genuine, _ := json.Marshal(webhook.RespondRequest{RequestID: "r1", Approver: "bob", Approved: false, RejectMode: messages.RejectSoft, Feedback: "use make test"})
	h := signed(genuine, time.Now())
	if status, answer := e.post(t, genuine, h); status != http.StatusOK || !decodeReply(t, answer).Applied {
		t.Fatalf("genuine response: %d %s", status, answer)
	}
	status, answer := e.post(t, genuine, h)
	if status != http.StatusConflict || !strings.Contains(decodeError(t, answer).Error.Message, "replayed") {
		t.Errorf("replay: %d %s, want 409 saying it is a replay", status, answer)
	}
	d := pend.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonRejected)
	if d.DecidedBy.ID != "bob" || d.RejectMode != messages.RejectSoft || d.Feedback != "use make test" {
		t.Errorf("decision by %s (%s, %q), want bob's soft rejection with feedback", d.DecidedBy.ID, d.RejectMode, d.Feedback)
	}
	if !strings.Contains(e.logs.String(), "refused an unauthenticated response") || !strings.Contains(e.logs.String(), "refused a replayed response") {
		t.Error("refusals are not logged")
	}
}

func TestWebhookRefusesResponsesItCannotUse(t *testing.T) {
	e := start(t)
	pend, q := e.Ask(t, "r1", "echo $(whoami)")
	if q.Always != nil {
		t.Fatalf("test setup: the broker offers Always %+v for a command substitution", q.Always)
	}
	e.recv.next(t, "approval_needed", "r1")

	raw := func(s string) []byte { return []byte(s) }
	// Each approval names the question's digest, as the system shown the
	// question does: what is refused is refused for another reason.
	approving := `"approved":true,"digest":"` + q.Digest + `"`
	cases := []struct {
		name     string
		body     []byte
		status   int
		code     messages.ErrorCode
		mentions string
	}{
		{"an approver who is not configured", raw(`{"request_id":"r1","approver":"mallory",` + approving + `}`), 403, messages.CodeForbidden, `"mallory" is not a configured approver`},
		{"a question the bot does not know", raw(`{"request_id":"r404","approver":"alice",` + approving + `}`), 404, messages.CodeNotFound, "unknown question"},
		{"a body that is not JSON", raw(`approved=yes`), 400, messages.CodeInvalidRequest, "not a response object"},
		{"two JSON values", raw(`{"request_id":"r1","approver":"alice",` + approving + `} {}`), 400, messages.CodeInvalidRequest, "more than one JSON value"},
		{"an approval that names no digest", raw(`{"request_id":"r1","approver":"alice","approved":true}`), 400, messages.CodeInvalidRequest, "digest is required with approved true"},
		{"no approved", raw(`{"request_id":"r1","approver":"alice"}`), 400, messages.CodeInvalidRequest, "approved is required"},
		{"no request id", raw(`{"approver":"alice",` + approving + `}`), 400, messages.CodeInvalidRequest, "request_id is required"},
		{"an unknown field", raw(`{"request_id":"r1","approver":"alice",` + approving + `,"aproved_by":"x"}`), 400, messages.CodeInvalidRequest, "aproved_by"},
		{"a scope on a rejection", raw(`{"request_id":"r1","approver":"alice","approved":false,"scope":"session"}`), 400, messages.CodeInvalidRequest, "scope goes with approvals only"},
		{"feedback on an approval", raw(`{"request_id":"r1","approver":"alice",` + approving + `,"feedback":"ok"}`), 400, messages.CodeInvalidRequest, "feedback goes with rejections only"},
		{"an unknown scope", raw(`{"request_id":"r1","approver":"alice",` + approving + `,"scope":"forever"}`), 400, messages.CodeInvalidRequest, `scope "forever"`},
		{"Always on a question that offers none", raw(`{"request_id":"r1","approver":"alice",` + approving + `,"scope":"always"}`), 400, messages.CodeInvalidRequest, "Always is not offered: the command has no pattern a grant could name"},
		{"Session on a question that offers none", raw(`{"request_id":"r1","approver":"alice",` + approving + `,"scope":"session"}`), 400, messages.CodeInvalidRequest, "Session is not offered: the command has no pattern a grant could name"},
		{"a device with a control character", raw(`{"request_id":"r1","approver":"alice",` + approving + `,"device":"pa\u001bger"}`), 400, messages.CodeInvalidRequest, "device"},
		{"a body over 64 KiB", raw(`{"request_id":"r1","approver":"alice","approved":false,"feedback":"` + strings.Repeat("x", 70<<10) + `"}`), 413, messages.CodeTooLarge, "larger than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, answer := e.post(t, c.body, signed(c.body, time.Now()))
			if status != c.status {
				t.Fatalf("status %d %s, want %d", status, answer, c.status)
			}
			er := decodeError(t, answer)
			if er.Error.Code != c.code || !strings.Contains(er.Error.Message, c.mentions) {
				t.Errorf("error %s %q, want %s mentioning %q", er.Error.Code, er.Error.Message, c.code, c.mentions)
			}
		})
	}
	// Nothing was decided: the question is still open.
	if status, answer := e.respond(t, webhook.RespondRequest{RequestID: "r1", Approver: "carol", Approved: true, Digest: q.Digest}); status != http.StatusOK || !decodeReply(t, answer).Applied {
		t.Fatalf("valid response: %d %s", status, answer)
	}
	if d := pend.Wait(t); d.DecidedBy.ID != "carol" || d.Scope != messages.ScopeOnce {
		t.Errorf("decision %s by %s, want carol's approval once", d.Scope, d.DecidedBy.ID)
	}
}

func TestWebhookLateResponseGetsTheStandingDecision(t *testing.T) {
	e := start(t)
	pend, q := e.Ask(t, "r1", "make deploy")
	e.recv.next(t, "approval_needed", "r1") // the bot shows it before carol answers
	if rep := e.Device.Approve(q, "carol", messages.ScopeOnce); !rep.Applied {
		t.Fatalf("carol's approval: %+v", rep)
	}
	brokertest.WantDecision(t, pend.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	e.recv.next(t, "resolved", "r1")

	status, answer := e.respond(t, webhook.RespondRequest{RequestID: "r1", Approver: "alice", Approved: false})
	if status != http.StatusOK {
		t.Fatalf("late response: %d %s", status, answer)
	}
	rep := decodeReply(t, answer)
	if rep.Applied || rep.State != messages.StateApproved || rep.Decision == nil || rep.Decision.DecidedBy.ID != "carol" || !strings.Contains(rep.Reason, "carol") {
		t.Errorf("late reply %+v, want not applied with carol's standing approval", rep)
	}
}

func TestWebhookQuorumAndMembershipAreTheBrokers(t *testing.T) {
	e := start(t)
	pend, q := e.Ask(t, "k1", "kubectl delete pod api-0")
	e.recv.next(t, "approval_needed", "k1")

	_, answer := e.respond(t, webhook.RespondRequest{RequestID: "k1", Approver: "bob", Approved: true, Digest: q.Digest})
	if rep := decodeReply(t, answer); rep.Applied || !strings.Contains(rep.Reason, `"bob" is not a member of team oncall`) {
		t.Errorf("bob's reply %+v", rep)
	}
	_, answer = e.respond(t, webhook.RespondRequest{RequestID: "k1", Approver: "carol", Approved: true, Digest: q.Digest})
	if rep := decodeReply(t, answer); !rep.Applied || rep.State != messages.StatePending || len(rep.ApprovalsSoFar) != 1 {
		t.Errorf("carol's reply %+v, want one approval counted", rep)
	}
	// The updated count reaches the receiver as the question again.
	d := e.recv.next(t, "approval_needed", "k1")
	if q, _ := messages.Decode[messages.ApprovalNeeded](d.Body, 1<<20); len(q.ApprovalsSoFar) != 1 || q.ApprovalsSoFar[0] != "carol" {
		t.Errorf("updated question approvals %v, want [carol]", q.ApprovalsSoFar)
	}
	_, answer = e.respond(t, webhook.RespondRequest{RequestID: "k1", Approver: "carol", Approved: false, RejectMode: messages.RejectHard})
	if rep := decodeReply(t, answer); rep.Applied {
		t.Errorf("carol's second answer was applied: %+v", rep)
	}
	if rep := decodeReply(t, answer); !strings.Contains(rep.Reason, "already counted") {
		t.Errorf("carol's second answer: %+v", rep)
	}
	_, answer = e.respond(t, webhook.RespondRequest{RequestID: "k1", Approver: "erin", Approved: true, Scope: messages.ScopeOnce, Digest: q.Digest})
	if rep := decodeReply(t, answer); !rep.Applied || rep.State != messages.StateApproved {
		t.Errorf("erin's reply %+v, want the quorum met", rep)
	}
	if d := pend.Wait(t); d.DecidedBy.ID != "erin" || d.Outcome != messages.OutcomeAllow {
		t.Errorf("decision %s by %s, want the approval of erin, the second approver", d.Outcome, d.DecidedBy.ID)
	}
}

// The system behind the webhook names the digest of the question it was
// shown: an approval naming another version of it (a forged event, or one
// changed on the way) is refused, logged and not sent; a rejection needs
// none.
func TestWebhookApprovalsNameTheQuestionsDigest(t *testing.T) {
	e := start(t)
	pend, q := e.Ask(t, "r1", "make deploy")
	e.recv.next(t, "approval_needed", "r1")
	other := q
	other.Request.Arguments = json.RawMessage(`{"command":"make test"}`)
	status, answer := e.respond(t, webhook.RespondRequest{RequestID: "r1", Approver: "alice", Approved: true, Digest: other.ShownDigest()})
	if rep := decodeReply(t, answer); status != http.StatusOK || rep.Applied || rep.State != messages.StatePending ||
		!strings.Contains(rep.Reason, "another version of the question") {
		t.Fatalf("an approval naming another digest: %d %+v, want refused", status, rep)
	}
	if !strings.Contains(e.logs.String(), "answer refused: it names another version of the question") {
		t.Error("the refusal is not logged")
	}
	if d, _ := pend.Peek(); d != nil {
		t.Fatalf("the refused approval decided the call: %+v", d)
	}
	status, answer = e.respond(t, webhook.RespondRequest{RequestID: "r1", Approver: "bob", Approved: false, RejectMode: messages.RejectSoft})
	if status != http.StatusOK || !decodeReply(t, answer).Applied {
		t.Fatalf("a rejection without a digest: %d %s, want applied", status, answer)
	}
	brokertest.WantDecision(t, pend.Wait(t), messages.OutcomeDeny, messages.ReasonRejected)
}
