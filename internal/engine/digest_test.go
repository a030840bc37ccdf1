package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// An approval names the version of the question it approves: one without
// a digest — of any scope, with changes, or a quorum's vote — is refused,
// says what is missing, is logged, and changes nothing (no vote counted,
// the request pending and still approvable by a response that names it).
func TestAnApprovalWithoutADigestIsRefusedAndChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name, policy, command, approver string
		scope                           messages.Scope
		edit                            string
	}{
		{"once", testPolicy, "make deploy", "bob", messages.ScopeOnce, ""},
		{"session", testPolicy, "make deploy", "bob", messages.ScopeSession, ""},
		{"always", testPolicy, "make deploy", "bob", messages.ScopeAlways, ""},
		{"with changes", editsPolicy, "make clean", "bob", messages.ScopeOnce, `{"command":"make clean -n"}`},
		{"a quorum's first vote", quorumPolicy, "helm upgrade web ./chart", "carol", messages.ScopeOnce, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.policy, nil, nil)
			req := bash("s-nodigest", "nd-1", tc.command)
			req.RequestedBy = ""
			r.request(t, req)
			resp := messages.Response{RequestID: req.RequestID, SessionID: req.SessionID,
				Approver: messages.Approver{ID: tc.approver, Channel: "test"}, Approved: true, Scope: tc.scope}
			if tc.edit != "" {
				resp.UpdatedArguments = json.RawMessage(tc.edit)
			}
			rep := r.respondWith(t, resp)
			if rep.Applied || rep.State != messages.StatePending || rep.Decision != nil || len(rep.ApprovalsSoFar) != 0 {
				t.Fatalf("an approval without a digest: %+v, want refused", rep)
			}
			if !strings.Contains(rep.Reason, "names no digest") || !strings.Contains(rep.Reason, "the question it approves") {
				t.Errorf("reason %q does not say the digest is missing and why it is needed", rep.Reason)
			}
			r.wantPending(t, req, "a refused approval without a digest")
			if rec, err := r.store.Get(t.Context(), req.SessionID, req.RequestID); err != nil || len(rec.Approvals) != 0 {
				t.Fatalf("approvals counted after the refusal: %+v, %v", rec.Approvals, err)
			}
			if !strings.Contains(r.logs.String(), "response refused") {
				t.Errorf("the refusal was not logged:\n%s", r.logs)
			}
			resp.Digest = r.rec.shown(t, req.RequestID)
			if rep := r.respondWith(t, resp); !rep.Applied {
				t.Fatalf("the same approval naming the question's digest: %+v, want applied", rep)
			}
		})
	}
}

// A rejection without a digest is applied: refusing it would only keep
// alive a call someone judged dangerous.
func TestARejectionWithoutADigestIsApplied(t *testing.T) {
	r := newRig(t, testPolicy, nil, nil)
	req := bash("s-nodigest-reject", "ndr-1", "make deploy")
	r.request(t, req)
	rep := r.respondWith(t, messages.Response{RequestID: req.RequestID, SessionID: req.SessionID,
		Approver: messages.Approver{ID: "bob", Channel: "test"}, RejectMode: messages.RejectSoft, Feedback: "not today"})
	if !rep.Applied || rep.State != messages.StateRejected || rep.Decision == nil || rep.Decision.Outcome != messages.OutcomeDeny {
		t.Fatalf("a rejection without a digest: %+v, want applied", rep)
	}
}
