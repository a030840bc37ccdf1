package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// stepUpPolicy makes kubectl questions need a second factor made in the
// last 60 s.
const stepUpPolicy = `
mode: auto-edit
step_up: { max_age: 60s }
rules:
  - { rule: "bash(kubectl *)", action: ask, step_up: true }
  - { rule: "bash(make *)", action: ask }
teams:
  default: { members: [alice, bob, carol] }
`

// stepUpAsk stores a kubectl ask and returns it with its question.
func (r *rig) stepUpAsk(t *testing.T, id string) (*messages.Request, messages.ApprovalNeeded) {
	t.Helper()
	req := r.askEdit(t, "s-stepup", id, "kubectl delete ns "+id)
	q := r.rec.asks[len(r.rec.asks)-1]
	if q.StepUp == nil || !strings.Contains(q.StepUp.Why, "rule bash(kubectl *)") || q.StepUp.MaxAgeS != 60 {
		t.Fatalf("question step_up %+v, want the kubectl rule's with max_age_s 60", q.StepUp)
	}
	return req, q
}

func stepUpApproval(req *messages.Request, q messages.ApprovalNeeded, ev *messages.StepUp) messages.Response {
	return messages.Response{RequestID: req.RequestID, SessionID: req.SessionID, Digest: q.Digest,
		Approver: messages.Approver{ID: "bob", Channel: "web"}, Approved: true, StepUp: ev}
}

func TestAStepUpQuestionSaysSoAndItsDigestCoversIt(t *testing.T) {
	r := newRig(t, stepUpPolicy, nil, nil)
	_, q := r.stepUpAsk(t, "su-digest")
	if q.Digest != q.ShownDigest() {
		t.Fatalf("digest %s is not the shown digest", q.Digest)
	}
	stripped := q
	stripped.StepUp = nil
	if stripped.ShownDigest() == q.Digest {
		t.Fatal("removing step_up from a question keeps its digest: a copy without it would pass as the same question")
	}
	if offered := q.Offer(messages.ScopeSession); offered != nil && offered.Offered {
		t.Fatalf("a step-up question offers a session grant: %+v", offered)
	}
	plain := r.askEdit(t, "s-stepup", "su-plain", "make build")
	if last := r.rec.asks[len(r.rec.asks)-1]; last.Request.RequestID != plain.RequestID || last.StepUp != nil {
		t.Fatalf("a question without step-up rules carries step_up %+v", last.StepUp)
	}
}

func TestAnApprovalOfAStepUpQuestionWithoutFreshEvidenceIsRefused(t *testing.T) {
	r := newRig(t, stepUpPolicy, nil, nil)
	now := time.Now()
	tests := []struct {
		name string
		ev   *messages.StepUp
		want string
	}{
		{"no evidence", nil, "needs step-up (rule bash(kubectl *)), and the response carries none"},
		{"evidence older than max_age", &messages.StepUp{Method: "webauthn", CredentialID: "AQID", AssertedAt: now.Add(-2 * time.Minute)}, "needs one made in the last 1m0s"},
		{"evidence from the future", &messages.StepUp{Method: "webauthn", CredentialID: "AQID", AssertedAt: now.Add(time.Minute)}, "in the future"},
		{"another method", &messages.StepUp{Method: "totp", CredentialID: "AQID", AssertedAt: now}, `carries "totp"`},
	}
	req, q := r.stepUpAsk(t, "su-refused")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := r.respondWith(t, stepUpApproval(req, q, tc.ev))
			if rep.Applied || !strings.Contains(rep.Reason, tc.want) {
				t.Fatalf("reply %+v, want refused with %q", rep, tc.want)
			}
			r.wantPending(t, req, tc.name)
		})
	}
	t.Run("evidence without the question's digest", func(t *testing.T) {
		resp := stepUpApproval(req, q, &messages.StepUp{Method: "webauthn", CredentialID: "AQID", AssertedAt: now})
		resp.Digest = ""
		rep := r.respondWith(t, resp)
		if rep.Applied || !strings.Contains(rep.Reason, "names no digest") {
			t.Fatalf("reply %+v, want refused for the missing digest", rep)
		}
	})
	t.Run("a rejection needs none", func(t *testing.T) {
		rep := r.respondWith(t, messages.Response{RequestID: req.RequestID, SessionID: req.SessionID, Digest: q.Digest,
			Approver: messages.Approver{ID: "carol", Channel: "slack"}, RejectMode: messages.RejectSoft})
		if !rep.Applied || rep.State != messages.StateRejected {
			t.Fatalf("a rejection of a step-up question: %+v", rep)
		}
	})
}

func TestASteppedUpApprovalIsAppliedAndAudited(t *testing.T) {
	r := newRig(t, stepUpPolicy, nil, nil)
	req, q := r.stepUpAsk(t, "su-ok")
	ev := &messages.StepUp{Method: "webauthn", CredentialID: "cred-bob-1", AssertedAt: time.Now().Add(-10 * time.Second), UserVerified: true}
	rep := r.respondWith(t, stepUpApproval(req, q, ev))
	if !rep.Applied || rep.State != messages.StateApproved {
		t.Fatalf("a stepped-up approval: %+v", rep)
	}
	got := rep.Decision.DecidedBy.StepUp
	if got == nil || got.CredentialID != "cred-bob-1" || !got.UserVerified {
		t.Fatalf("decision decided_by.step_up %+v, want the approval's evidence", got)
	}
	r.eng.Close() // waits for the outbox's effects, the audit record among them
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	var audited bool
	for _, d := range append(r.rec.appended, r.rec.enqueued...) {
		if d.RequestID == req.RequestID && d.DecidedBy.StepUp != nil && d.DecidedBy.StepUp.CredentialID == "cred-bob-1" {
			audited = true
		}
	}
	if !audited {
		t.Fatalf("no audit record of %s names the step-up (appended %+v, enqueued %+v)", req.RequestID, r.rec.appended, r.rec.enqueued)
	}
}
