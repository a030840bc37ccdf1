package policy

import (
	"strings"
	"testing"
)

const stepUpPolicy = `
step_up:
  max_age: 90s
  safety_overrides: true
  quorum: true
  tiers: [mcp]
teams:
  default: { members: [alice, bob] }
  prod:    { members: [carol, dave], step_up: true }
  pair:    { members: [carol, dave, erin], approvals_required: 2 }
rules:
  - { rule: "bash(kubectl *)", action: ask, step_up: true }
  - { rule: "bash(helm *)", action: ask, route: prod }
  - { rule: "bash(terraform apply*)", action: ask, route: pair }
  - { rule: "bash(npm *)", action: ask, grantable: true }
`

func TestStepUpIsRequiredByARuleATeamOrARisk(t *testing.T) {
	p := mustParse(t, stepUpPolicy)
	tests := []struct {
		name string
		tool string
		arg  string
		why  string // "" when no step-up is needed
	}{
		{"a rule with step_up: true", "bash", "kubectl delete ns prod", "rule bash(kubectl *)"},
		{"a sub-command's step_up rule counts in a chain", "bash", "echo hi && kubectl get pods", "rule bash(kubectl *)"},
		{"a team with step_up: true", "bash", "helm upgrade web ./chart", "team prod"},
		{"a quorum of two", "bash", "terraform apply -auto-approve", "quorum"},
		{"a safety override", "bash", "rm -rf /", "safety override"},
		{"a listed tier", "mcp__github__merge", "", "tier mcp"},
		{"a plain ask needs none", "bash", "npm install", ""},
		{"an allow needs none", "read_file", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			call := Call{Tool: tc.tool, Cwd: "/work", Mode: ModeAlwaysAsk}
			if tc.arg != "" {
				call.Arguments = args("command", tc.arg)
			} else {
				call.Arguments = []byte(`{"path":"/work/a"}`)
			}
			d := p.Evaluate(call)
			need := p.StepUp(&d)
			if tc.why == "" {
				if need != nil {
					t.Fatalf("%s (%s): step-up %+v, want none", tc.arg, d.Action, need)
				}
				return
			}
			if need == nil {
				t.Fatalf("%s (%s, %s): no step-up, want %q", tc.arg, d.Action, d.Reason, tc.why)
			}
			if !strings.Contains(need.Why, tc.why) || need.MaxAgeS != 90 {
				t.Fatalf("step-up %+v, want why containing %q and max_age_s 90", need, tc.why)
			}
		})
	}
}

func TestAStepUpQuestionIsSettledByNoGrant(t *testing.T) {
	p := mustParse(t, stepUpPolicy)
	// A mode ask of the mcp tier: grantable but for its step-up.
	d := p.Evaluate(Call{Tool: "mcp__github__merge", Arguments: []byte(`{}`), Mode: ModeAlwaysAsk})
	ok, why := p.NeedOf(&d).SettledBy(Authority{Teams: []string{"default"}, Approvers: 2})
	if ok || !strings.Contains(why, "needs step-up") {
		t.Fatalf("a grant settles a step-up question (ok=%v, why=%q)", ok, why)
	}
}

func TestStepUpDefaultsToTwoMinutesAndNothingRequired(t *testing.T) {
	p := mustParse(t, "rules:\n  - { rule: \"bash(kubectl *)\", action: ask }\n")
	if p.StepUpMaxAge() != DefaultStepUpMaxAge {
		t.Fatalf("max age %s, want %s", p.StepUpMaxAge(), DefaultStepUpMaxAge)
	}
	d := askBash(p, "kubectl delete ns prod")
	if need := p.StepUp(&d); need != nil {
		t.Fatalf("step-up %+v without any step_up setting", need)
	}
}

func TestBadStepUpSettingsAreRejectedWithTheirLine(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"step_up on an allow rule", "rules:\n  - { rule: \"bash(ls)\", action: allow, step_up: true }\n", "step_up only applies to ask rules"},
		{"a max_age of zero", "step_up:\n  max_age: 0s\n", "step_up.max_age: duration must be positive"},
		{"a max_age over an hour", "step_up:\n  max_age: 2h\n", "out of range"},
		{"an unknown tier", "step_up:\n  tiers: [danger]\n", "unknown tier \"danger\""},
		{"an unknown key", "step_up:\n  always: true\n", "always"},
		{"a team's step_up that is not a boolean", "teams:\n  prod: { members: [a], step_up: maybe }\n", "p.yaml:2:34: teams.prod.step_up: want true or false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "p.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
