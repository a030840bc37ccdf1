package policy

import (
	"strings"
	"testing"
	"time"
)

// issue13Policy is the policy of issue 13's report.
const issue13Policy = `
teams:
  default: { members: [alice, bob] }
  oncall:  { members: [carol, dave, erin], approvals_required: 2 }
rules:
  - { rule: "bash(kubectl *)", action: ask, route: oncall }
  - { rule: "@shell(*.env*)", action: ask }
  - { rule: "bash(terraform plan*)", action: ask, grantable: true, max_age: 2h }
`

func askBash(p *Policy, cmd string) Decision {
	return p.Evaluate(Call{Tool: "bash", Arguments: args("command", cmd), Cwd: "/work", Mode: ModeAlwaysAsk})
}

func TestGrantRule(t *testing.T) {
	p := mustParse(t, issue13Policy)
	defaultOne := Authority{Teams: []string{"default"}, Approvers: 1}
	oncallTwo := Authority{Teams: []string{"oncall"}, Approvers: 2}
	oncallOne := Authority{Teams: []string{"oncall"}, Approvers: 1}
	tests := []struct {
		name    string
		cmd     string
		by      Authority
		settles bool
		why     string // part of the reason when it does not settle
	}{
		{"a mode ask is settled by a grant of its team", "npm install", defaultOne, true, ""},
		{"a mode ask is not settled by another team's grant", "npm install", oncallTwo, false, "approved for team oncall, and this question is for team default"},
		{"an explicit ask rule is settled by no grant", "kubectl delete namespace prod", oncallTwo, false, "the rule bash(kubectl *) asks every time"},
		{"a .env read asks every time", "cat .env.local", defaultOne, false, "@shell(*.env*) asks every time"},
		{"a chain with a .env read asks every time", "cat .env.production | grep DB_", defaultOne, false, "@shell(*.env*)"},
		{"a grantable rule is settled by a grant", "terraform plan -out x", defaultOne, true, ""},
		{"a safety override is settled by no grant", "rm -rf /", defaultOne, false, "safety override"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := askBash(p, tt.cmd)
			if d.Action != Ask {
				t.Fatalf("%q: action %s, want ask (%s)", tt.cmd, d.Action, d.Reason)
			}
			ok, why := p.NeedOf(&d).SettledBy(tt.by)
			if ok != tt.settles || !strings.Contains(why, tt.why) {
				t.Errorf("SettledBy = %v, %q; want %v, %q", ok, why, tt.settles, tt.why)
			}
		})
	}

	t.Run("a quorum ask needs as many approvers behind the grant", func(t *testing.T) {
		q := mustParse(t, `
teams:
  default: { members: [alice, bob] }
  oncall:  { members: [carol, dave, erin], approvals_required: 2 }
rules:
  - { rule: "bash(helm *)", action: ask, route: oncall, grantable: true }
`)
		d := askBash(q, "helm upgrade web ./chart")
		n := q.NeedOf(&d)
		if n.Team != "oncall" || n.Approvals != 2 {
			t.Fatalf("need = %+v, want oncall by 2", n)
		}
		if ok, why := n.SettledBy(oncallOne); ok || !strings.Contains(why, "approved by 1 approver, and this question needs 2 approvals") {
			t.Errorf("one approver: %v, %q", ok, why)
		}
		if ok, _ := n.SettledBy(oncallTwo); !ok {
			t.Error("two approvers of oncall do not settle it")
		}
		if ok, _ := n.SettledBy(Authority{Teams: []string{"default", "oncall"}, Approvers: 3}); !ok {
			t.Error("a grant of several teams including oncall does not settle it")
		}
	})
	t.Run("allows and denies are never a grant's", func(t *testing.T) {
		d := p.Evaluate(Call{Tool: "read", Arguments: args("file_path", "/work/a.go"), Cwd: "/work", Mode: ModeYolo})
		if ok, _ := p.NeedOf(&d).SettledBy(defaultOne); ok {
			t.Errorf("an %s is settled by a grant", d.Action)
		}
	})
}

func TestGrantSettings(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		p := mustParse(t, "mode: always-ask\n")
		d := askBash(p, "npm install")
		if p.SessionGrants() != SessionGrantPatterns {
			t.Errorf("session_grants = %s, want patterns", p.SessionGrants())
		}
		if got := p.GrantMaxAge(&d, true); got != DefaultAlwaysMaxAge {
			t.Errorf("always max age = %s, want %s", got, DefaultAlwaysMaxAge)
		}
		if got := p.GrantMaxAge(&d, false); got != 0 {
			t.Errorf("session max age = %s, want 0 (the session's retention)", got)
		}
	})
	t.Run("policy and rule settings", func(t *testing.T) {
		p := mustParse(t, `
session_grants: tool
grants: { max_age: { session: 8h, always: 0 } }
rules:
  - { rule: "bash(terraform plan*)", action: ask, grantable: true, max_age: 2h }
`)
		if p.SessionGrants() != SessionGrantTool {
			t.Errorf("session_grants = %s, want tool", p.SessionGrants())
		}
		d := askBash(p, "npm install")
		if a, s := p.GrantMaxAge(&d, true), p.GrantMaxAge(&d, false); a != 0 || s != 8*time.Hour {
			t.Errorf("max ages always %s, session %s; want 0 and 8h", a, s)
		}
		d = askBash(p, "terraform plan && npm install")
		if a, s := p.GrantMaxAge(&d, true), p.GrantMaxAge(&d, false); a != 2*time.Hour || s != 2*time.Hour {
			t.Errorf("a rule's max_age: always %s, session %s; want 2h both", a, s)
		}
	})
	errs := []struct{ name, src, want string }{
		{"unknown session_grants", "session_grants: all\n", `test.yaml:2:17: session_grants: unknown value "all" (want patterns or tool)`},
		{"bad max_age", "grants: { max_age: { always: forever } }\n", `test.yaml:2:30: grants.max_age.always: invalid duration "forever"`},
		{"unknown grants key", "grants: { ttl: 1h }\n", `unknown key "ttl" (want max_age)`},
		{"unknown max_age scope", "grants: { max_age: { agent: 1h } }\n", `unknown key "agent" (want session or always)`},
		{"grantable on an allow rule", "rules:\n  - { rule: \"bash(ls)\", action: allow, grantable: true }\n", "test.yaml:3:40: rules[0]: grantable only applies to ask rules"},
		{"grantable not a boolean", "rules:\n  - { rule: \"bash(ls)\", action: ask, grantable: yes please }\n", "want true or false"},
		{"max_age on a deny rule", "rules:\n  - { rule: \"bash(ls)\", action: deny, max_age: 1h }\n", "max_age only applies to ask rules"},
		{"negative rule max_age", "rules:\n  - { rule: \"bash(ls)\", action: ask, max_age: -1h }\n", "duration must be positive"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte("home: /h\n"+tt.src), "test.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse error = %v, want %q", err, tt.want)
			}
		})
	}
}
