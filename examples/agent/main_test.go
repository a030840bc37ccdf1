package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestTheDemoCallsGetWhatTheDocsSay holds the demo agent's calls to what
// README.md says of the built-in policy (make run) and docs/OPERATIONS.md
// of the compose policy: in both, the rm call asks, so a question shows up
// for an approver.
func TestTheDemoCallsGetWhatTheDocsSay(t *testing.T) {
	compose, err := policy.Load("../../deploy/compose/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]*policy.Policy{"built-in": policy.Default(), "compose": compose}
	want := map[string][]policy.Action{
		"built-in": {policy.Allow, policy.Deny, policy.Allow, policy.Ask},
		"compose":  {policy.Allow, policy.Deny, policy.Allow, policy.Ask},
	}
	for name, p := range policies {
		t.Run(name, func(t *testing.T) {
			for i, c := range demoCalls() {
				args, _ := json.Marshal(c.Arguments)
				d := p.Evaluate(policy.Call{Tool: c.Tool, Arguments: args})
				if d.Action != want[name][i] {
					t.Errorf("%s %s: %s (%s), want %s", c.Tool, args, d.Action, d.Reason, want[name][i])
				}
			}
		})
	}

	// The compose question goes to a team the compose bot serves, with
	// alice, who signs in on its page, among the members.
	data, err := os.ReadFile("../../deploy/compose/approver-bot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var bot struct {
		Teams     []string       `yaml:"teams"`
		Approvers map[string]any `yaml:"approvers"`
	}
	if err := yaml.Unmarshal(data, &bot); err != nil {
		t.Fatal(err)
	}
	calls := demoCalls()
	last := calls[len(calls)-1]
	args, _ := json.Marshal(last.Arguments)
	route := compose.Evaluate(policy.Call{Tool: last.Tool, Arguments: args}).Route
	if route == "" {
		route = "default"
	}
	team, ok := compose.Teams()[route]
	if !ok || !strings.Contains(strings.Join(bot.Teams, ","), route) {
		t.Fatalf("the compose question goes to team %q: in the policy %v, served by the bot %v", route, ok, bot.Teams)
	}
	if _, ok := bot.Approvers["alice"]; !ok || !strings.Contains(strings.Join(team.Members, ","), "alice") {
		t.Errorf("alice must be a member of %q (%v) and an approver of the compose bot", route, team.Members)
	}
}

// TestWithoutABrokerTheAgentSaysSoWithinItsWait: NATS is up, no broker
// subscribes. The agent gives up after -wait with an error that says what is
// wrong, and its retries are printed, not swallowed.
func TestWithoutABrokerTheAgentSaysSoWithinItsWait(t *testing.T) {
	ns := testenv.NATS(t)
	var stdout, stderr bytes.Buffer
	start := time.Now()
	err := run(context.Background(), settings{url: ns.ClientURL(), session: "demo", agent: "demo-agent", wait: 700 * time.Millisecond}, &stdout, &stderr)
	took := time.Since(start)
	if !errors.Is(err, errNoBroker) {
		t.Fatalf("err = %v, want %v", err, errNoBroker)
	}
	for _, w := range []string{"within 700ms", ns.ClientURL(), "NATS is up, but no broker serves", "make run"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if took > 5*time.Second {
		t.Errorf("gave up after %s, want about the 700ms wait", took)
	}
	if !strings.Contains(stderr.String(), "retrying") {
		t.Errorf("the client's retries were not printed; stderr %q", stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("asked about calls without a broker: %q", stdout.String())
	}
}

func TestAnUnreachableNATSIsAClearError(t *testing.T) {
	err := run(context.Background(), settings{url: "nats://127.0.0.1:1", wait: time.Second}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "is `make run` or the compose plane running?") {
		t.Fatalf("err = %v", err)
	}
}
