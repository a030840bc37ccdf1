package messages_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

func digestQuestion() messages.ApprovalNeeded {
	return messages.ApprovalNeeded{V: 1, Type: messages.TypeApprovalNeeded, Team: "default",
		Request: messages.Request{V: 1, RequestID: "r1", SessionID: "s1", AgentID: "pod-7", Tool: "bash",
			Arguments: json.RawMessage(`{"command":"make test"}`), Cwd: "/work"},
		Risk:      messages.Risk{Tier: "exec", Reason: "no rule allows it", Subcommands: []messages.Verdict{{Command: "make test", Action: "ask"}}},
		ExpiresAt: time.Unix(1_700_000_000, 0).UTC(), ApprovalsRequired: 1,
		Offers: []messages.GrantOffer{{Scope: messages.ScopeSession, Offered: true, Tool: "bash", Patterns: []string{"make test"}}}}
}

func TestShownDigestNamesWhatTheQuestionShows(t *testing.T) {
	base := digestQuestion()
	d := base.ShownDigest()
	if err := (&messages.Response{RequestID: "r1", SessionID: "s1", Approver: messages.Approver{ID: "alice"}, Digest: d}).Validate(); err != nil {
		t.Fatalf("a response naming the digest is invalid: %v", err)
	}
	same := []struct {
		name   string
		change func(q *messages.ApprovalNeeded)
	}{
		{"a reminder", func(q *messages.ApprovalNeeded) { q.Reminder, q.EscalationStep = 1, 2 }},
		{"an approval counted", func(q *messages.ApprovalNeeded) { q.ApprovalsSoFar = []string{"bob"} }},
		{"a later expiry", func(q *messages.ApprovalNeeded) { q.ExpiresAt = q.ExpiresAt.Add(time.Minute) }},
		{"the arguments re-encoded with spaces", func(q *messages.ApprovalNeeded) { q.Request.Arguments = json.RawMessage(`{ "command" : "make test" }`) }},
		{"a round trip through JSON", func(q *messages.ApprovalNeeded) {
			data, _ := json.Marshal(q)
			*q = messages.ApprovalNeeded{}
			_ = json.Unmarshal(data, q)
		}},
	}
	for _, c := range same {
		q := digestQuestion()
		c.change(&q)
		if got := q.ShownDigest(); got != d {
			t.Errorf("%s changed the digest", c.name)
		}
	}
	differ := []struct {
		name   string
		change func(q *messages.ApprovalNeeded)
	}{
		{"other arguments", func(q *messages.ApprovalNeeded) {
			q.Request.Arguments = json.RawMessage(`{"command":"make test","Command":"curl x | bash"}`)
		}},
		{"another working directory", func(q *messages.ApprovalNeeded) { q.Request.Cwd = "/" }},
		{"another description", func(q *messages.ApprovalNeeded) { q.Request.Description = "read-only" }},
		{"another verdict", func(q *messages.ApprovalNeeded) { q.Risk.Subcommands[0].Action = "allow" }},
		{"a safety override", func(q *messages.ApprovalNeeded) { q.Risk.SafetyOverride = "curl | sh" }},
		{"other offers", func(q *messages.ApprovalNeeded) { q.Offers[0].Patterns = []string{"make *"} }},
		{"another quorum", func(q *messages.ApprovalNeeded) { q.ApprovalsRequired = 2 }},
		{"a batch", func(q *messages.ApprovalNeeded) { q.BatchRemaining = []messages.BatchItem{{Tool: "bash"}} }},
	}
	for _, c := range differ {
		q := digestQuestion()
		c.change(&q)
		if got := q.ShownDigest(); got == d {
			t.Errorf("%s kept the digest", c.name)
		}
	}
}

func TestDigestFieldsAreChecked(t *testing.T) {
	for _, bad := range []string{"sha256:", "md5:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("A", 64), "sha256:" + strings.Repeat("a", 63), "sha256:" + strings.Repeat("g", 64)} {
		r := messages.Response{RequestID: "r1", SessionID: "s1", Approver: messages.Approver{ID: "alice"}, Digest: bad}
		if err := r.Validate(); !errors.Is(err, messages.ErrInvalid) || !strings.Contains(err.Error(), "digest") {
			t.Errorf("digest %q: Validate = %v, want an invalid digest", bad, err)
		}
		q := digestQuestion()
		q.Digest = bad
		if err := q.Validate(); err == nil {
			t.Errorf("a question with digest %q is valid", bad)
		}
	}
}

func TestTheSignatureCoversTheDigest(t *testing.T) {
	q := digestQuestion()
	r := messages.Response{V: 1, RequestID: "r1", SessionID: "s1", Approver: messages.Approver{ID: "alice"}, Approved: true}
	without := r.SigningBytes()
	r.Digest = q.ShownDigest()
	with := r.SigningBytes()
	if bytes.Equal(with, without) || !bytes.HasSuffix(with, []byte(r.Digest+",")) {
		t.Errorf("the signing bytes do not end with the digest: %q", with)
	}
	r.Digest = "sha256:" + strings.Repeat("0", 64)
	if bytes.Equal(r.SigningBytes(), with) {
		t.Error("two digests sign the same bytes")
	}
}

func TestEditedArgumentsMayNotRepeatOrCaseVaryAKey(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{`{"command":"ls","command":"rm -rf ~"}`, `repeat the key "command"`},
		{`{"command":"make test","Command":"curl x | bash"}`, `differ only in case`},
	} {
		r := messages.Response{RequestID: "r1", SessionID: "s1", Approver: messages.Approver{ID: "alice"}, Approved: true,
			UpdatedArguments: json.RawMessage(c.args)}
		if err := r.Validate(); !errors.Is(err, messages.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate = %v, want %q", c.args, err, c.want)
		}
	}
	ok := messages.Response{RequestID: "r1", SessionID: "s1", Approver: messages.Approver{ID: "alice"}, Approved: true,
		UpdatedArguments: json.RawMessage(`{"command":"make test","description":"x","nested":{"a":1,"A":2}}`)}
	if err := ok.Validate(); err != nil {
		t.Errorf("plain edited arguments: %v", err)
	}
}
