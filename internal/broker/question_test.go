package broker_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// A pending request whose stored question cannot be read (a damaged value
// in Redis) is never approved: the response is refused with an error that
// names the request and the cause, and the request stays pending (its
// expiry denies it).
func TestAnUnreadableQuestionIsNeverApproved(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Redis: true, DisableReaper: true})
	store := p.Store()
	q := messages.ApprovalNeeded{V: 1, Type: "approval_needed", Team: "default", ApprovalsRequired: 1,
		Request: messages.Request{V: 1, RequestID: "bad-1", SessionID: "s-bad", AgentID: "pod-1", Tool: "bash",
			Arguments: json.RawMessage(`{"command":"make deploy"}`)}}
	if _, _, err := store.Prepare(t.Context(), session.Request{ID: "bad-1", SessionID: "s-bad", AgentID: "pod-1", Tool: "bash",
		Teams: []string{"default"}, ApprovalsRequired: 1, TTL: time.Minute, Question: q}); err != nil {
		t.Fatal(err)
	}
	if res, err := store.Open(t.Context(), "s-bad", "bad-1"); err != nil || !res.Applied {
		t.Fatalf("Open: %+v, %v", res, err)
	}
	// Damage the stored question: the record's last two fields (payload
	// codec "z1" and its compressed payload) become a raw, truncated JSON.
	admin := p.Redis.Client()
	key := "signoff:{s-bad}:r:bad-1"
	v, err := admin.Get(t.Context(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(v, "2:z1")
	if i < 0 {
		t.Fatalf("the stored record has no compressed question to damage: %q", v)
	}
	damaged := v[:i] + `0:12:{"request":{`
	if err := admin.Set(t.Context(), key, damaged, redis.KeepTTL).Err(); err != nil {
		t.Fatal(err)
	}

	data, _ := json.Marshal(messages.Response{V: 1, RequestID: "bad-1", SessionID: "s-bad",
		Approver: messages.Approver{ID: "alice", Channel: "test"}, Approved: true})
	reply := p.RawRequest(messages.Subjects{}.Respond(), data)
	var rep struct {
		Applied bool                `json:"applied"`
		Error   *messages.ErrorBody `json:"error"`
	}
	if err := json.Unmarshal(reply, &rep); err != nil {
		t.Fatalf("reply %s: %v", reply, err)
	}
	if rep.Applied || rep.Error == nil || !strings.Contains(rep.Error.Message, "bad-1") || !strings.Contains(rep.Error.Message, "question") {
		t.Fatalf("approval of a request with an unreadable question: reply %s, want an error naming bad-1 and its question", reply)
	}
	rec, err := store.Get(t.Context(), "s-bad", "bad-1")
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != messages.StatePending || rec.QuestionErr == nil {
		t.Fatalf("after the refused approval: state %s, QuestionErr %v; want pending with the error", rec.State, rec.QuestionErr)
	}
}
