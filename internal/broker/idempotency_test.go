package broker_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// A retried request id whose content differs from the stored request is an
// invalid_request naming the conflict; the same request again (arguments
// reordered or re-spaced included) gets the stored receipt (DESIGN §3,
// issue 14 item 5).
func TestARetryWithDifferentContentIsAConflict(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Redis: true})
	dev := p.Approver("default")
	first := `{"v":1,"request_id":"idem-1","session_id":"s-idem","agent_id":"pod-1","tool":"bash","arguments":{"command":"make deploy","timeout":5}}`
	rc := send(t, p, first)
	if rc.State != messages.StatePending {
		t.Fatalf("first attempt: %+v, want pending", rc)
	}
	dev.NextAsk("idem-1")

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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := p.RawRequest(p.Subjects.Req("s-idem"), []byte(tc.retry))
			rep, isErr := messages.IsErrorReply(out)
			if tc.differs == "" {
				if isErr {
					t.Fatalf("retry refused: %s", out)
				}
				var rc messages.Receipt
				if err := json.Unmarshal(out, &rc); err != nil || rc.RequestID != "idem-1" || rc.State != messages.StatePending {
					t.Fatalf("retry receipt %s, want the stored pending receipt", out)
				}
				return
			}
			if !isErr || rep.Error.Code != messages.CodeInvalidRequest {
				t.Fatalf("reply %s, want invalid_request", out)
			}
			if msg := rep.Error.Message; !strings.Contains(msg, `"idem-1"`) || !strings.Contains(msg, tc.differs+" differs") {
				t.Fatalf("message %q, want it to name the request id and %q", msg, tc.differs)
			}
		})
	}
	// The conflicting retries changed nothing: the question is still the
	// first one, pending.
	rec, err := p.Store().Get(t.Context(), "s-idem", "idem-1")
	if err != nil || rec.State != messages.StatePending || !strings.Contains(string(rec.Question.Request.Arguments), "make deploy") {
		t.Fatalf("stored request after conflicts: %+v, %v", rec, err)
	}
}

func send(t *testing.T, p *brokertest.Plane, req string) messages.Receipt {
	t.Helper()
	out := p.RawRequest(p.Subjects.Req("s-idem"), []byte(req))
	var rc messages.Receipt
	if err := json.Unmarshal(out, &rc); err != nil {
		t.Fatalf("receipt %s: %v", out, err)
	}
	return rc
}
