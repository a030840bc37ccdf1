package broker_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

var subjects, _ = messages.NewSubjects(messages.DefaultPrefix)

// call sends body on subject and returns the raw reply.
func (p *lonePlane) call(subject string, body any) []byte {
	p.t.Helper()
	data, ok := body.([]byte)
	if !ok {
		data, _ = json.Marshal(body)
	}
	rep, err := p.nc.Request(subject, data, 5*time.Second)
	if err != nil {
		p.t.Fatalf("request on %s: %v", subject, err)
	}
	return rep.Data
}

// errorCode is the code of an error reply ("" for any other reply).
func errorCode(data []byte) (messages.ErrorCode, string) {
	var rep messages.ErrorReply
	if json.Unmarshal(data, &rep) != nil || rep.Error.Code == "" {
		return "", ""
	}
	return rep.Error.Code, rep.Error.Message
}

// A ttl_ms too large for a duration wrapped around: a huge value became
// under a millisecond (denied at once), MaxInt64 went negative (the
// default applied). Every long request is capped at the policy's max_ttl.
func TestARequestedTTLIsCappedAtMaxTTLWithoutOverflow(t *testing.T) {
	p := startLonePlane(t, broker.Config{})
	for _, tc := range []struct {
		name  string
		ttlMS int64
		want  time.Duration
	}{
		{"MaxInt64 is capped, not negative", math.MaxInt64, policy.DefaultMaxTTL},
		{"a value whose nanoseconds wrap to under a millisecond is capped", 18446744073710, policy.DefaultMaxTTL},
		{"a value past the duration range is capped", math.MaxInt64 / 1000, policy.DefaultMaxTTL},
		{"ten hours is capped", (10 * time.Hour).Milliseconds(), policy.DefaultMaxTTL},
		{"a minute is kept", time.Minute.Milliseconds(), time.Minute},
		{"none takes the default", 0, policy.DefaultTTL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := strings.NewReplacer(" ", "-", ",", "").Replace(tc.name)
			before := time.Now()
			out := p.call(subjects.Req("s-ttl"), messages.Request{V: 1, RequestID: id, SessionID: "s-ttl", AgentID: "pod-1",
				Tool: "bash", Arguments: json.RawMessage(`{"command":"make deploy"}`), TTLMillis: tc.ttlMS})
			var rc messages.Receipt
			if err := json.Unmarshal(out, &rc); err != nil || rc.State != messages.StatePending {
				t.Fatalf("reply %s, want a pending receipt", out)
			}
			if got := rc.ExpiresAt.Sub(before); got < tc.want-2*time.Second || got > tc.want+2*time.Second {
				t.Errorf("expires in %s, want %s", got, tc.want)
			}
		})
	}
}

// countingPolicy counts reloads.
type countingPolicy struct {
	broker.StaticPolicy
	reloads *atomic.Int32
}

func (c countingPolicy) Reload() error { c.reloads.Add(1); return nil }

// admin.reload_policy reloaded the policy whatever its body said: garbage
// got ok:true. Its body is an AdminRequest without fields, checked like any
// admin request's.
func TestReloadPolicyRefusesABadBodyAndReloadsNothing(t *testing.T) {
	pol, err := policy.Parse([]byte("mode: auto-edit\n"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	p := startLonePlane(t, broker.Config{Policy: countingPolicy{broker.StaticPolicy{P: pol}, &n}})
	for _, tc := range []struct {
		name, body string
		code       messages.ErrorCode
		want       string
	}{
		{"garbage", "reload now please", messages.CodeInvalidRequest, "JSON"},
		{"an empty body", "", messages.CodeInvalidRequest, ""},
		{"a JSON array", "[1,2]", messages.CodeInvalidRequest, ""},
		{"another version", `{"v":2}`, messages.CodeUnsupportedVersion, "version"},
		{"a field reload_policy does not take", `{"v":1,"session_id":"s-1"}`, messages.CodeInvalidRequest, "session_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := errorCode(p.call(subjects.Admin(messages.AdminOpReloadPolicy), []byte(tc.body)))
			if code != tc.code || !strings.Contains(msg, tc.want) {
				t.Errorf("reply %s %q, want %s naming %q", code, msg, tc.code, tc.want)
			}
			if got := n.Load(); got != 0 {
				t.Fatalf("%d reloads after a refused request", got)
			}
		})
	}
	out := p.call(subjects.Admin(messages.AdminOpReloadPolicy), []byte(`{"v":1}`))
	var rep messages.AdminReply
	if err := json.Unmarshal(out, &rep); err != nil || !rep.OK || n.Load() != 1 {
		t.Errorf("reply %s with %d reloads, want ok and one reload", out, n.Load())
	}
}

// The admin handler ran checks of its own, weaker than
// AdminRequest.ValidateOp: a set_mode naming an agent id was accepted (and
// applied to the session). Now ValidateOp is the one check.
func TestAdminRequestsAreCheckedByValidateOp(t *testing.T) {
	p := startLonePlane(t, broker.Config{})
	for _, tc := range []struct {
		name, op, body, field string
	}{
		{"set_mode with an agent id", messages.AdminOpSetMode, `{"v":1,"session_id":"s-1","agent_id":"pod-1","mode":"yolo"}`, "agent_id"},
		{"set_mode with both targets", messages.AdminOpSetMode, `{"v":1,"session_id":"s-1","agent_type":"coder","mode":"yolo"}`, "session_id"},
		{"set_mode with an unknown mode", messages.AdminOpSetMode, `{"v":1,"session_id":"s-1","mode":"anything-goes"}`, "mode"},
		{"revoke_grants with a mode", messages.AdminOpRevokeGrants, `{"v":1,"agent_id":"pod-1","mode":"yolo"}`, "mode"},
		{"an unknown operation", "drop_all", `{"v":1}`, "drop_all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := errorCode(p.call(subjects.Admin(tc.op), []byte(tc.body)))
			if code != messages.CodeInvalidRequest || !strings.Contains(msg, tc.field) {
				t.Errorf("reply %s %q, want invalid_request naming %s", code, msg, tc.field)
			}
		})
	}
	kv, err := p.js.KeyValue(context.Background(), broker.ModesBucket)
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := kv.Keys(context.Background()); !errors.Is(err, jetstream.ErrNoKeysFound) {
		t.Errorf("mode overrides stored by refused requests: %v (%v)", keys, err)
	}
	// A valid one still works.
	out := p.call(subjects.Admin(messages.AdminOpSetMode), []byte(`{"v":1,"session_id":"s-1","mode":"yolo"}`))
	if code, msg := errorCode(out); code != "" {
		t.Fatalf("valid set_mode refused: %s %s", code, msg)
	}
}

// A status query for an id the store does not know is the requester's
// problem: a not_found reply, no store error counted, nothing at ERROR.
func TestStatusOfAnUnknownRequestIsNotFoundNotAStoreError(t *testing.T) {
	p := startLonePlane(t, broker.Config{})
	code, _ := errorCode(p.call(subjects.Status("s-1"), messages.StatusRequest{V: 1, RequestID: "never-sent"}))
	if code != messages.CodeNotFound {
		t.Errorf("code %q, want not_found", code)
	}
	if n := metricSum(t, p.m, "signoff_store_errors_total"); n != 0 {
		t.Errorf("%v store errors counted after a status of an unknown id", n)
	}
	if got := testutil.ToFloat64(p.m.BadMessages.WithLabelValues(string(messages.CodeNotFound))); got != 1 {
		t.Errorf("signoff_bad_messages_total{code=not_found} = %v, want 1", got)
	}
	if strings.Contains(p.logs.String(), "level=ERROR") {
		t.Errorf("logged at ERROR:\n%s", p.logs.String())
	}
}

// PROTOCOL documents an llm_message on cancelled decisions; they had none.
func TestCancelledDecisionsCarryTheDocumentedLLMMessage(t *testing.T) {
	p := startLonePlane(t, broker.Config{})
	for _, tc := range []struct {
		name, id, reason string
	}{
		{"with the agent's reason", "c-1", "agent shutting down"},
		{"without a reason", "c-2", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			decisions, err := p.nc.SubscribeSync(subjects.Decision("s-cancel", tc.id))
			if err != nil {
				t.Fatal(err)
			}
			out := p.call(subjects.Req("s-cancel"), messages.Request{V: 1, RequestID: tc.id, SessionID: "s-cancel", AgentID: "pod-1",
				Tool: "Bash", Arguments: json.RawMessage(`{"command":"make deploy"}`)})
			if !strings.Contains(string(out), `"pending"`) {
				t.Fatalf("reply %s, want pending", out)
			}
			out = p.call(subjects.Cancel("s-cancel"), messages.CancelRequest{V: 1, RequestIDs: []string{tc.id}, Reason: tc.reason})
			if !strings.Contains(string(out), tc.id) {
				t.Fatalf("cancel reply %s does not list %s", out, tc.id)
			}
			m, err := decisions.NextMsg(5 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			var d messages.Decision
			if err := json.Unmarshal(m.Data, &d); err != nil {
				t.Fatal(err)
			}
			want := messages.LLMMessageCancelled("Bash", tc.reason)
			if d.ReasonCode != messages.ReasonCancelled || d.LLMMessage != want {
				t.Errorf("decision %s/%q, want cancelled/%q", d.ReasonCode, d.LLMMessage, want)
			}
			var rc messages.Receipt
			_ = json.Unmarshal(p.call(subjects.Status("s-cancel"), messages.StatusRequest{V: 1, RequestID: tc.id}), &rc)
			if rc.Decision == nil || rc.Decision.LLMMessage != want {
				t.Errorf("status receipt %+v, want the decision with its llm_message", rc)
			}
		})
	}
}
