package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestAdminBinaryStopsAndResumesAnAgentWithTheNATSURLFromTheEnvironment(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Redis: true})
	env := []string{"SIGNOFF_NATS=" + p.URL()}
	ask := func(session, agent string) *messages.Decision {
		t.Helper()
		d, err := p.Agent(session, agent).Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("ls")})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	r := runBin(t, nil, env, "admin", "stop", "--agent", "a2", "--reason", "drill", "--json")
	if r.code != 0 {
		t.Fatalf("signoff admin stop: exit %d, stderr %q", r.code, r.stderr)
	}
	var rep messages.AdminReply
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Stop == nil || rep.Stop.ID != "agent=a2" {
		t.Fatalf("stop --json printed %q (%v), want the stop agent=a2", r.stdout, err)
	}
	d := ask("sess-bin-a2", "a2")
	brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonHardStop)
	if !strings.Contains(d.Reason, "fleet stop agent=a2") {
		t.Fatalf("reason %q does not name the stop", d.Reason)
	}
	brokertest.WantDecision(t, ask("sess-bin-a3", "a3"), messages.OutcomeAllow, messages.ReasonPolicyAllow)

	r = runBin(t, nil, env, "admin", "stops")
	if r.code != 0 || !strings.Contains(r.stdout, "agent=a2") || !strings.Contains(r.stdout, "drill") {
		t.Fatalf("signoff admin stops: exit %d, stdout %q", r.code, r.stdout)
	}
	if r = runBin(t, nil, env, "admin", "resume", "--agent", "a2"); r.code != 0 {
		t.Fatalf("signoff admin resume: exit %d, stderr %q", r.code, r.stderr)
	}
	brokertest.WantDecision(t, ask("sess-bin-a2-after", "a2"), messages.OutcomeAllow, messages.ReasonPolicyAllow)
	if r = runBin(t, nil, env, "admin", "resume", "--agent", "a2"); r.code != 3 {
		t.Fatalf("resume of a lifted stop: exit %d, want 3 (stderr %q)", r.code, r.stderr)
	}
	if r = runBin(t, nil, env, "admin"); r.code != 2 || !strings.Contains(r.stderr, "Exit status") {
		t.Fatalf("signoff admin alone: exit %d, stderr %q; want 2 and the usage", r.code, r.stderr)
	}
}

func TestAdminAgentsNamesTheHookThatSentEachAgentsLastRequest(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: hookPolicy})
	s, id := ids()
	r := runBin(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id}),
		append(hookEnv(p), "SIGNOFF_AGENT=pod-cc-1"), "hook", "claude-code")
	if r.code != 0 {
		t.Fatalf("hook: exit %d, stderr %q", r.code, r.stderr)
	}
	s, _ = ids()
	r = runBin(t, fixture(t, "codex/pre_tool_use.json", map[string]any{"session_id": s}),
		append(hookEnv(p), "SIGNOFF_AGENT=pod-codex-1"), "hook", "codex")
	if r.code != 0 && r.code != 2 {
		t.Fatalf("codex hook: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runBin(t, nil, []string{"SIGNOFF_NATS=" + p.URL()}, "admin", "agents", "--json")
	if r.code != 0 {
		t.Fatalf("admin agents: exit %d, stderr %q", r.code, r.stderr)
	}
	var agents []messages.AgentSeen
	if err := json.Unmarshal([]byte(r.stdout), &agents); err != nil {
		t.Fatalf("admin agents --json: %v: %q", err, r.stdout)
	}
	gates := map[string]string{}
	for _, a := range agents {
		gates[a.AgentID] = a.Gate
		if a.GateVersion == "" {
			t.Errorf("agent %s: no gate version", a.AgentID)
		}
	}
	if gates["pod-cc-1"] != messages.GateClaudeCode || gates["pod-codex-1"] != messages.GateCodex {
		t.Fatalf("gates %v: want pod-cc-1 by %s and pod-codex-1 by %s", gates, messages.GateClaudeCode, messages.GateCodex)
	}
}
