package admincli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/admincli"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// admin runs `signoff admin args…` in-process against plane p.
func admin(t *testing.T, p *brokertest.Plane, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errw bytes.Buffer
	full := append([]string{args[0], "--nats", p.URL()}, args[1:]...)
	code = admincli.Run(t.Context(), full, &out, &errw)
	return out.String(), errw.String(), code
}

// adminJSON runs a command with --json, wants exit 0 and decodes stdout.
func adminJSON[T any](t *testing.T, p *brokertest.Plane, args ...string) T {
	t.Helper()
	out, errs, code := admin(t, p, append(args, "--json")...)
	if code != admincli.ExitOK {
		t.Fatalf("signoff admin %s: exit %d, stderr %q", strings.Join(args, " "), code, errs)
	}
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("signoff admin %s: stdout is not JSON (%v): %q", strings.Join(args, " "), err, out)
	}
	return v
}

func init() {
	// An agent's settings in the test's environment must not leak into
	// the admin command (it reads only the connection variables).
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SIGNOFF_") {
			k, _, _ := strings.Cut(kv, "=")
			_ = os.Unsetenv(k)
		}
	}
}

func TestPendingJSONListsAnOpenQuestionByItsRequestID(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Redis: true})
	ap := p.Approver("oncall")
	c := p.Agent("sess-pending", "a1")
	brokertest.Ask(t.Context(), c, "req-kubectl-1", "bash", brokertest.Bash("kubectl get pods"))
	ap.NextAsk("req-kubectl-1")

	qs := adminJSON[[]messages.ApprovalNeeded](t, p, "pending")
	if len(qs) != 1 || qs[0].Request.RequestID != "req-kubectl-1" || qs[0].Team != "oncall" {
		t.Fatalf("pending = %+v, want the one question req-kubectl-1 for oncall", qs)
	}
	if qs := adminJSON[[]messages.ApprovalNeeded](t, p, "pending", "--agent", "a9"); len(qs) != 0 {
		t.Fatalf("pending --agent a9 = %+v, want none", qs)
	}
	out, _, code := admin(t, p, "pending", "--team", "oncall")
	if code != 0 || !strings.Contains(out, "req-kubectl-1") || !strings.Contains(out, "REQUEST_ID") {
		t.Fatalf("pending table: exit %d, %q", code, out)
	}
}

func TestRevokeEndsASessionGrantAndTheNextCallAsksAgain(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Redis: true})
	ap := p.Approver("default")
	c := p.Agent("sess-grant", "a1")
	first := brokertest.Ask(t.Context(), c, "req-make-1", "bash", brokertest.Bash("make build"))
	ap.Approve(ap.NextAsk("req-make-1"), "alice", messages.ScopeSession)
	brokertest.WantDecision(t, first.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	again := brokertest.Ask(t.Context(), c, "req-make-2", "bash", brokertest.Bash("make build"))
	brokertest.WantDecision(t, again.Wait(t), messages.OutcomeAllow, messages.ReasonScopeGrant)

	grants := adminJSON[[]messages.Grant](t, p, "grants", "--session", "sess-grant")
	if len(grants) != 1 || grants[0].Scope != messages.ScopeSession || grants[0].SessionID != "sess-grant" {
		t.Fatalf("grants = %+v, want the one session grant of sess-grant", grants)
	}
	// A flag after the grant id is a flag, as the docs write it (README
	// walk W2: it was sent as a second grant id).
	out, errs, code := admin(t, p, "revoke", grants[0].ID, "--timeout", "5s")
	if code != admincli.ExitOK || !strings.Contains(out, grants[0].ID) || strings.Contains(out+errs, "--timeout") {
		t.Fatalf("revoke %s: exit %d, stdout %q, stderr %q", grants[0].ID, code, out, errs)
	}
	if left := adminJSON[[]messages.Grant](t, p, "grants", "--session", "sess-grant"); len(left) != 0 {
		t.Fatalf("grants after revoke = %+v, want none", left)
	}
	third := brokertest.Ask(t.Context(), c, "req-make-3", "bash", brokertest.Bash("make build"))
	if q := ap.NextAsk("req-make-3"); q.Request.RequestID != "req-make-3" {
		t.Fatalf("the call after the revoke did not ask: %+v", q)
	}
	if d, _ := third.Peek(); d != nil {
		t.Fatalf("the call after the revoke was decided without asking: %+v", d)
	}
	// The same id again is gone: exit 3, said on stderr.
	_, errs, code = admin(t, p, "revoke", grants[0].ID)
	if code != admincli.ExitNotFound || !strings.Contains(errs, "not_found") {
		t.Fatalf("second revoke: exit %d, stderr %q; want %d and not_found", code, errs, admincli.ExitNotFound)
	}
}

func TestStopAgentDeniesNewSessionsOfThatAgentOnlyUntilResume(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Redis: true, Replicas: 2})
	ap := p.Approver("oncall")
	// A question of a2 already pending is denied by the stop.
	old := p.Agent("sess-a2-old", "a2")
	pending := brokertest.Ask(t.Context(), old, "req-a2-pending", "bash", brokertest.Bash("kubectl delete pod x"))
	ap.NextAsk("req-a2-pending")

	var rep messages.AdminReply
	rep = adminJSON[messages.AdminReply](t, p, "stop", "--agent", "a2", "--reason", "incident 42", "--by", "ops-jane")
	if rep.Stop == nil || rep.Stop.ID != "agent=a2" || len(rep.Denied) != 1 || rep.Denied[0] != "req-a2-pending" {
		t.Fatalf("stop reply %+v: want stop agent=a2 that denied req-a2-pending", rep)
	}
	d := pending.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonHardStop)
	if !strings.Contains(d.Reason, "fleet stop agent=a2") || !strings.Contains(d.Reason, "incident 42") {
		t.Fatalf("pending request's reason %q does not name the stop", d.Reason)
	}

	// A session a2 opens after the stop, on whichever replica takes it.
	for i := range 4 {
		c := p.Agent("sess-a2-new-"+string(rune('a'+i)), "a2")
		d, err := c.Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("ls")})
		if err != nil {
			t.Fatal(err)
		}
		brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonHardStop)
		if !strings.Contains(d.Reason, "fleet stop agent=a2 by ops-jane: incident 42") {
			t.Fatalf("reason %q does not name the stop", d.Reason)
		}
	}
	a3 := p.Agent("sess-a3", "a3")
	d, err := a3.Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("ls")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonPolicyAllow)

	stops := adminJSON[[]messages.FleetStop](t, p, "stops")
	if len(stops) != 1 || stops[0].ID != "agent=a2" || stops[0].By != "ops-jane" {
		t.Fatalf("stops = %+v, want agent=a2 by ops-jane", stops)
	}
	if _, errs, code := admin(t, p, "resume", "--agent", "a2"); code != admincli.ExitOK {
		t.Fatalf("resume: exit %d, stderr %q", code, errs)
	}
	// Every replica lifts it within a second.
	deadline := time.Now().Add(time.Second)
	for i := 0; ; i++ {
		c := p.Agent("sess-a2-after-"+string(rune('a'+i)), "a2")
		d, err := c.Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("ls")})
		if err != nil {
			t.Fatal(err)
		}
		if d.Outcome == messages.OutcomeAllow && i >= 3 {
			break
		}
		if d.Outcome != messages.OutcomeAllow && time.Now().After(deadline) {
			t.Fatalf("a2 still denied a second after resume: %+v", d)
		}
	}
	if _, errs, code := admin(t, p, "resume", "--agent", "a2"); code != admincli.ExitNotFound {
		t.Fatalf("resume of no stop: exit %d (stderr %q), want %d", code, errs, admincli.ExitNotFound)
	}
}

func TestPolicyListsTheVersionOfEveryReplica(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Replicas: 2})
	var answers []struct {
		Replica       string `json:"replica"`
		PolicyVersion string `json:"policy_version"`
	}
	answers = adminJSON[[]struct {
		Replica       string `json:"replica"`
		PolicyVersion string `json:"policy_version"`
	}](t, p, "policy")
	got := map[string]string{}
	for _, a := range answers {
		got[a.Replica] = a.PolicyVersion
	}
	want := p.Policy.Version()
	if len(got) != 2 || got["replica-0"] != want || got["replica-1"] != want {
		t.Fatalf("policy answers %+v, want replica-0 and replica-1 at %s", answers, want)
	}
}

func TestAgentsListsTheLastRequestAndGateOfEachAgent(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Redis: true})
	c := p.Agent("sess-seen", "a-seen", client.WithGate(messages.GateCodex, "v9.8.7"))
	for range 3 {
		if _, err := c.Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("ls")}); err != nil {
			t.Fatal(err)
		}
	}
	agents := adminJSON[[]messages.AgentSeen](t, p, "agents")
	if len(agents) != 1 {
		t.Fatalf("agents = %+v, want a-seen", agents)
	}
	a := agents[0]
	if a.AgentID != "a-seen" || a.Gate != messages.GateCodex || a.GateVersion != "v9.8.7" || a.Requests != 3 ||
		a.SessionID != "sess-seen" || a.Tool != "bash" || a.Silent {
		t.Fatalf("agent %+v: want a-seen by codex-hook v9.8.7, 3 requests, not silent", a)
	}
}

func TestExitCodesSayWhatHappened(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"an unknown command is a usage error", []string{"frobnicate"}, admincli.ExitUsage},
		{"stop without a selector is a usage error", []string{"stop"}, admincli.ExitUsage},
		{"stop with all and an agent is a usage error", []string{"stop", "--all", "--agent", "a"}, admincli.ExitUsage},
		{"revoke without ids is a usage error", []string{"revoke"}, admincli.ExitUsage},
		{"revoke --all without a selector is a usage error", []string{"revoke", "--all"}, admincli.ExitUsage},
		{"mode without a target is a usage error", []string{"mode", "yolo"}, admincli.ExitUsage},
		{"mode with an unknown mode is a usage error", []string{"mode", "--session", "s", "fast"}, admincli.ExitUsage},
		{"revoking an unknown grant is not found", []string{"revoke", "gr_nope"}, admincli.ExitNotFound},
		{"resuming a selector not stopped is not found", []string{"resume", "--agent-type", "coder"}, admincli.ExitNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			args := tc.args
			if len(args) > 0 && args[0] != "frobnicate" {
				args = append([]string{args[0], "--nats", p.URL()}, args[1:]...)
			}
			if code := admincli.Run(t.Context(), args, &out, &errw); code != tc.want {
				t.Fatalf("signoff admin %v: exit %d, want %d (stderr %q)", tc.args, code, tc.want, errw.String())
			}
			if tc.want != admincli.ExitOK && errw.Len() == 0 {
				t.Fatal("a failure printed nothing on stderr")
			}
		})
	}
}

func TestNoBrokerIsExitFour(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{NoBroker: true})
	var out, errw bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	code := admincli.Run(ctx, []string{"stops", "--nats", p.URL(), "--timeout", "1s"}, &out, &errw)
	if code != admincli.ExitNoBroker || !strings.Contains(errw.String(), "no broker") {
		t.Fatalf("exit %d, stderr %q; want %d and no broker", code, errw.String(), admincli.ExitNoBroker)
	}
}

func TestAuditFindsASessionsDecisionsByOutcome(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	c := p.Agent("sess-audit", "a1")
	for id, cmd := range map[string]string{"req-audit-ls": "ls", "req-audit-rm": "rm -rf /srv"} {
		if _, err := c.Request(t.Context(), client.Call{RequestID: id, Tool: "bash", Arguments: brokertest.Bash(cmd)}); err != nil {
			t.Fatal(err)
		}
	}
	other := p.Agent("sess-audit-other", "a1")
	if _, err := other.Request(t.Context(), client.Call{RequestID: "req-audit-other", Tool: "bash", Arguments: brokertest.Bash("ls")}); err != nil {
		t.Fatal(err)
	}
	var recs []messages.AuditRecord
	for deadline := time.Now().Add(5 * time.Second); ; {
		out, errs, code := admin(t, p, "audit", "--session", "sess-audit", "--json")
		if code != admincli.ExitOK {
			t.Fatalf("audit: exit %d, stderr %q", code, errs)
		}
		recs = recs[:0]
		for line := range strings.Lines(out) {
			var r messages.AuditRecord
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("audit --json line %q: %v", line, err)
			}
			recs = append(recs, r)
		}
		if len(recs) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	ids := map[string]messages.Outcome{}
	for _, r := range recs {
		ids[r.Request.RequestID] = r.Decision.Outcome
	}
	if len(ids) != 2 || ids["req-audit-ls"] != messages.OutcomeAllow || ids["req-audit-rm"] != messages.OutcomeDeny {
		t.Fatalf("audit --session sess-audit = %v, want req-audit-ls allowed and req-audit-rm denied only", ids)
	}
	out, _, code := admin(t, p, "audit", "--session", "sess-audit", "--outcome", "deny", "--json")
	if code != admincli.ExitOK || strings.Count(out, "\n") != 1 || !strings.Contains(out, "req-audit-rm") {
		t.Fatalf("audit --outcome deny: exit %d, %q; want the one denied record", code, out)
	}
}

func TestModeOverrideOfASessionAppliesUntilCleared(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	ask := func(i int) *messages.Decision {
		t.Helper()
		c := p.Agent("sess-mode", "a1")
		d, err := c.Request(t.Context(), client.Call{Tool: "write_file", Arguments: map[string]any{"path": "/work/x.txt", "content": "x"}, Cwd: "/work",
			TTL: 200 * time.Millisecond})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		return d
	}
	brokertest.WantDecision(t, ask(0), messages.OutcomeAllow, messages.ReasonModeAllow)
	if _, errs, code := admin(t, p, "mode", "--session", "sess-mode", "always-ask"); code != admincli.ExitOK {
		t.Fatalf("mode: exit %d, stderr %q", code, errs)
	}
	waitFor(t, func() bool { return ask(1).ReasonCode == messages.ReasonTimeout }, "the write to ask under always-ask")
	if _, errs, code := admin(t, p, "mode", "--session", "sess-mode", "--clear"); code != admincli.ExitOK {
		t.Fatalf("mode --clear: exit %d, stderr %q", code, errs)
	}
	waitFor(t, func() bool { return ask(2).ReasonCode == messages.ReasonModeAllow }, "the write to be allowed again")
}

func waitFor(t *testing.T, ok func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
