package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// rig is a real plane with a real bot whose only channel is the web page,
// served by an httptest server.
type rig struct {
	plane *brokertest.Plane
	*server
}

// startRig starts a plane with replicas broker replicas and a bot serving
// teams (YAML list).
func startRig(t *testing.T, replicas int, teams string, o Options) *rig {
	t.Helper()
	return startRigOn(t, brokertest.Options{Replicas: replicas}, teams, o)
}

// startRigOn is startRig on a plane started with po (a policy, Redis).
func startRigOn(t *testing.T, po brokertest.Options, teams string, o Options) *rig {
	t.Helper()
	p := brokertest.Start(t, po)
	cfg := testConfig(t, teams, "{insecure_cookies: true}")
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	if o.MoveGuard == 0 {
		o.MoveGuard = -1 // the tests click as soon as a card shows; TestBrowserAMovedButtonIsNotTaken sets it
	}
	ch, err := New(cfg, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	bot, err := approverbot.New(cfg, p.NATS.Connect(t), []approverbot.Channel{ch}, approverbot.Options{Logger: o.Logger})
	if err != nil {
		t.Fatalf("approverbot.New: %v", err)
	}
	mux := http.NewServeMux()
	ch.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close) // after the bot stopped: its event streams end first
	brokertest.Run(t, "bot.Run", bot.Run)
	for ch.responder() == nil {
		time.Sleep(time.Millisecond)
	}
	return &rig{plane: p, server: &server{ch: ch, srv: srv}}
}

// waitQuestion polls GET /api/questions until id is listed.
func (r *rig) waitQuestion(t *testing.T, c *http.Client, id string) QuestionView {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var list questionsReply
		decodeJSON(t, r.do(t, c, "GET", "/api/questions", ""), &list)
		for _, v := range list.Questions {
			if v.RequestID == id {
				return v
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("question %s never listed", id)
	return QuestionView{}
}

// respond answers through POST /api/respond like curl does.
func (r *rig) respond(t *testing.T, c *http.Client, csrf, id, action, feedback string) (int, RespondResult, string) {
	t.Helper()
	return r.respondWith(t, c, csrf, RespondRequest{RequestID: id, Action: action, Feedback: feedback})
}

// digestOf is the digest GET /api/questions lists for id, "" when it
// lists no such question.
func (r *rig) digestOf(t *testing.T, c *http.Client, id string) string {
	t.Helper()
	res := r.do(t, c, "GET", "/api/questions", "", "Accept", "application/json")
	var list struct {
		Questions []QuestionView `json:"questions"`
	}
	if err := json.Unmarshal([]byte(readBody(t, res)), &list); err != nil {
		return ""
	}
	for _, q := range list.Questions {
		if q.RequestID == id {
			return q.Digest
		}
	}
	return ""
}

// respondWith posts req to /api/respond like curl does.
func (r *rig) respondWith(t *testing.T, c *http.Client, csrf string, req RespondRequest) (int, RespondResult, string) {
	t.Helper()
	if req.Digest == "" {
		req.Digest = r.digestOf(t, c, req.RequestID) // as the page sends its card's
	}
	body, _ := json.Marshal(req)
	res := r.do(t, c, "POST", "/api/respond", string(body), "Content-Type", "application/json", csrfHeader, csrf,
		"User-Agent", "curl/8.5.0")
	raw := readBody(t, res)
	var out RespondResult
	_ = json.Unmarshal([]byte(raw), &out)
	return res.StatusCode, out, raw
}

// TestAnswersThroughTheHTTPAPI is the curl flow of the compose smoke test:
// login with a JSON reply, list, respond with the CSRF token.
func TestAnswersThroughTheHTTPAPI(t *testing.T) {
	r := startRig(t, 2, "[default, oncall]", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	alice, aliceCSRF := r.login(t, "alice", alicePassword)
	bob, bobCSRF := r.login(t, "bob", bobPassword)

	t.Run("an approval reaches the agent with the approver's identity", func(t *testing.T) {
		agent := r.plane.Agent("sess-api", "pod-7")
		pending := brokertest.Ask(ctx, agent, "req-deploy", "bash", brokertest.Bash("make deploy"))
		v := r.waitQuestion(t, alice, "req-deploy")
		if v.Question.Team != "default" || !strings.Contains(v.HTML, "make deploy") {
			t.Fatalf("question %+v", v.Question)
		}
		status, out, raw := r.respond(t, alice, aliceCSRF, "req-deploy", actionApprove, "")
		if status != http.StatusOK || !out.Applied || out.State != messages.StateApproved {
			t.Fatalf("respond: %d %s", status, raw)
		}
		if out.Message != "Done: Approved (once) by Alice via web (curl)" {
			t.Fatalf("message %q", out.Message)
		}
		d := pending.Wait(t)
		brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
		if d.DecidedBy.ID != "alice" || d.DecidedBy.Channel != "web" || d.DecidedBy.Device != "curl" {
			t.Fatalf("decided by %+v, want alice via web from curl", d.DecidedBy)
		}

		status, out, raw = r.respond(t, bob, bobCSRF, "req-deploy", actionRejectHard, "too late")
		if status != http.StatusOK || out.Applied || !strings.HasPrefix(out.Message, "Not applied") {
			t.Fatalf("a late answer: %d %s, want applied:false with the reason", status, raw)
		}
	})

	t.Run("a quorum counts approvals and refuses non-members", func(t *testing.T) {
		carol, carolCSRF := r.login(t, "carol", "carol-password")
		dave, daveCSRF := r.login(t, "dave", "dave-password")
		agent := r.plane.Agent("sess-quorum", "pod-8")
		pending := brokertest.Ask(ctx, agent, "req-kubectl", "bash", brokertest.Bash("kubectl rollout restart deploy/api"))
		v := r.waitQuestion(t, carol, "req-kubectl")
		if v.Question.ApprovalsRequired != 2 {
			t.Fatalf("approvals_required %d, want 2", v.Question.ApprovalsRequired)
		}
		status, out, raw := r.respond(t, carol, carolCSRF, "req-kubectl", actionApprove, "")
		if status != http.StatusOK || !out.Applied || out.State != messages.StatePending ||
			out.Message != "Your approval counts: 1 of 2 approvals" {
			t.Fatalf("first approval: %d %s", status, raw)
		}
		// alice is not a member of the team the question is routed to:
		// the page never shows it to her, and her answer is as unknown as
		// one to a question never asked (the brokers would refuse it too).
		status, _, raw = r.respond(t, alice, aliceCSRF, "req-kubectl", actionApprove, "")
		if status != http.StatusNotFound {
			t.Fatalf("a non-member's approval: %d %s, want 404: the question is not hers to see", status, raw)
		}
		status, out, raw = r.respond(t, dave, daveCSRF, "req-kubectl", actionApprove, "")
		if status != http.StatusOK || !out.Applied || out.State != messages.StateApproved {
			t.Fatalf("second approval: %d %s", status, raw)
		}
		brokertest.WantDecision(t, pending.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	})
}
