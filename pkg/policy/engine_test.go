package policy

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// testHome is the home directory the test policies expand ~ to.
const testHome = "/home/tester"

func mustParse(t testing.TB, src string) *Policy {
	t.Helper()
	if !strings.Contains(src, "home:") {
		src = "home: " + testHome + "\n" + src
	}
	p, err := Parse([]byte(src), "test.yaml")
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, src)
	}
	return p
}

// args builds a JSON arguments object from key/value pairs.
func args(kv ...string) json.RawMessage {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

type evalCase struct {
	name      string
	tool      string
	args      json.RawMessage
	agentType string
	mode      Mode
	want      Action
	wantRule  string // checked when not empty; "-" means no rule
	wantLayer string // checked when not empty
}

func runEvalCases(t *testing.T, p *Policy, cases []evalCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := p.Evaluate(Call{Tool: tc.tool, Arguments: tc.args, AgentType: tc.agentType, Mode: tc.mode})
			if d.Action != tc.want {
				t.Fatalf("action = %s, want %s (reason %q, rule %q, layer %q)", d.Action, tc.want, d.Reason, d.Rule, d.Layer)
			}
			switch tc.wantRule {
			case "":
			case "-":
				if d.Rule != "" {
					t.Errorf("rule = %q, want none", d.Rule)
				}
			default:
				if d.Rule != tc.wantRule {
					t.Errorf("rule = %q, want %q (reason %q)", d.Rule, tc.wantRule, d.Reason)
				}
			}
			if tc.wantLayer != "" && d.Layer != tc.wantLayer {
				t.Errorf("layer = %q, want %q (reason %q)", d.Layer, tc.wantLayer, d.Reason)
			}
			if d.Reason == "" {
				t.Error("empty reason")
			}
		})
	}
}

func TestTiers(t *testing.T) {
	p := mustParse(t, `
mode: always-ask
tools:
  tiers: { my_reader: read, "acme_*": write, mcp__docs__search: read }
`)
	tests := []struct {
		tool string
		want Tier
	}{
		{"read_file", TierRead},
		{"Read", TierRead},
		{"glob", TierRead},
		{"grep", TierRead},
		{"list_files", TierRead},
		{"task_output", TierRead},
		{"ask_user", TierRead},
		{"write", TierWrite},
		{"Edit", TierWrite},
		{"multi_edit", TierWrite},
		{"delete", TierWrite},
		{"bash", TierExec},
		{"run_background", TierExec},
		{"spawn", TierExec},
		{"send_email", TierExec},
		{"mcp__github__create_issue", TierMCP},
		{"totally_unknown_tool", TierExec},
		{"my_reader", TierRead},
		{"acme_upload", TierWrite},
		{"mcp__docs__search", TierRead},
	}
	for _, tc := range tests {
		if got := p.TierOf(tc.tool); got != tc.want {
			t.Errorf("TierOf(%q) = %s, want %s", tc.tool, got, tc.want)
		}
	}
	if !p.IsShellTool("Bash") || p.IsShellTool("read_file") {
		t.Error("IsShellTool: bash must be a shell tool and read_file must not")
	}
}

func TestModesByTier(t *testing.T) {
	p := mustParse(t, `mode: always-ask`)
	tools := map[Tier]string{TierRead: "read_file", TierWrite: "write_file", TierExec: "some_exec_tool", TierMCP: "mcp__x__y"}
	want := map[Mode]map[Tier]Action{
		ModeAlwaysAsk: {TierRead: Allow, TierWrite: Ask, TierExec: Ask, TierMCP: Ask},
		ModeAutoEdit:  {TierRead: Allow, TierWrite: Allow, TierExec: Ask, TierMCP: Ask},
		ModeYolo:      {TierRead: Allow, TierWrite: Allow, TierExec: Allow, TierMCP: Allow},
	}
	for mode, byTier := range want {
		for tier, action := range byTier {
			d := p.Evaluate(Call{Tool: tools[tier], Arguments: args("path", "src/main.go"), Mode: mode})
			if d.Action != action || d.Layer != "mode" || d.Tier != tier {
				t.Errorf("%s × %s: got %s (layer %s, tier %s), want %s by mode", mode, tier, d.Action, d.Layer, d.Tier, action)
			}
			if !strings.Contains(d.Reason, string(mode)+" mode") {
				t.Errorf("%s × %s: reason %q does not name the mode", mode, tier, d.Reason)
			}
		}
	}
}

func TestCategoryHintNeverLowersTier(t *testing.T) {
	// The Call has no category at all: classification is the policy's. An
	// unknown tool is exec even if the agent would call it "read".
	p := mustParse(t, `mode: always-ask`)
	d := p.Evaluate(Call{Tool: "fetch_everything", Arguments: args("path", "x")})
	if d.Tier != TierExec || d.Action != Ask {
		t.Fatalf("unknown tool: tier %s action %s, want exec ask", d.Tier, d.Action)
	}
}

func TestLastMatchWins(t *testing.T) {
	p := mustParse(t, `
mode: auto-edit
rules:
  - { rule: "read_file(*)", action: allow }
  - { rule: "read_file(*.env)", action: deny }
  - { rule: "read_file(*.env.*)", action: deny }
  - { rule: "read_file(*.env.example)", action: allow }
  - { rule: "bash", action: ask }
  - { rule: "bash(git *)", action: allow }
  - { rule: "bash(git push *)", action: ask }
`)
	runEvalCases(t, p, []evalCase{
		{name: "a later deny beats an earlier allow", tool: "read_file", args: args("path", "app/.env"), want: Deny, wantRule: "read_file(*.env)"},
		{name: "env variants are denied", tool: "read_file", args: args("path", ".env.local"), want: Deny, wantRule: "read_file(*.env.*)"},
		{name: "the example after the deny is allowed", tool: "read_file", args: args("path", "config/.env.example"), want: Allow, wantRule: "read_file(*.env.example)"},
		{name: "other files fall to the first rule", tool: "read_file", args: args("path", "README.md"), want: Allow, wantRule: "read_file(*)"},
		{name: "a narrower later shell rule wins", tool: "bash", args: args("command", "git push origin main"), want: Ask, wantRule: "bash(git push *)"},
		{name: "a broader later shell rule wins over the bare rule", tool: "bash", args: args("command", "git status"), want: Allow, wantRule: "bash(git *)"},
		{name: "the bare rule catches the rest", tool: "bash", args: args("command", "make"), want: Ask, wantRule: "bash"},
	})
}

func TestRuleOrderIsAcrossToolNamesAndGlobs(t *testing.T) {
	// Exact-name and glob-named rules live in different indexes; the merge
	// must still honour file order.
	p := mustParse(t, `
mode: yolo
rules:
  - { rule: "mcp__github__create_issue", action: allow }
  - { rule: "mcp__github__*", action: deny }
  - { rule: "mcp__github__get_*", action: allow }
  - { rule: "*", action: ask }
  - { rule: "read_file", action: allow }
`)
	runEvalCases(t, p, []evalCase{
		{name: "a later catch-all beats an earlier exact allow", tool: "mcp__github__create_issue", want: Ask, wantRule: "*"},
		{name: "an exact rule after the catch-all wins", tool: "read_file", args: args("path", "x"), want: Allow, wantRule: "read_file"},
		{name: "tool names are case-insensitive", tool: "READ_FILE", args: args("path", "x"), want: Allow, wantRule: "read_file"},
	})
	p2 := mustParse(t, `
mode: always-ask
rules:
  - { rule: "mcp__github__*", action: deny }
  - { rule: "mcp__github__get_*", action: allow }
  - { rule: "MCP__Slack__Post", action: ask, route: default }
`)
	runEvalCases(t, p2, []evalCase{
		{name: "a glob rule denies the server's tools", tool: "mcp__github__delete_repo", args: args("path", "x"), want: Deny, wantRule: "mcp__github__*", wantLayer: "static"},
		{name: "a later narrower glob allows", tool: "mcp__github__get_issue", want: Allow, wantRule: "mcp__github__get_*"},
		{name: "rule tool names are case-insensitive", tool: "mcp__slack__post", want: Ask, wantRule: "MCP__Slack__Post"},
	})
}

func TestAgentLayer(t *testing.T) {
	p := mustParse(t, `
mode: auto-edit
rules:
  - { rule: "write_file", action: allow }
  - { rule: "read_file(*.env)", action: deny }
  - { rule: "bash(ls *)", action: allow }
agents:
  explore:
    mode: always-ask
    rules:
      - { rule: "*", action: deny }
      - { rule: "read_file", action: allow }
      - { rule: "bash(ls *)", action: allow }
  general:
    rules:
      - { rule: "bash", action: allow }
`)
	runEvalCases(t, p, []evalCase{
		{name: "agent deny vetoes a static allow", tool: "write_file", args: args("path", "a.go"), agentType: "explore", want: Deny, wantRule: "*", wantLayer: "agent:explore"},
		{name: "agent allow stands when static is silent", tool: "read_file", args: args("path", "a.go"), agentType: "explore", want: Allow, wantRule: "read_file", wantLayer: "agent:explore"},
		{name: "static deny tightens an agent allow", tool: "read_file", args: args("path", ".env"), agentType: "explore", want: Deny, wantRule: "read_file(*.env)", wantLayer: "static"},
		{name: "agent types are case-insensitive", tool: "write_file", args: args("path", "a.go"), agentType: "Explore", want: Deny, wantLayer: "agent:explore"},
		{name: "an unknown agent type has no layer", tool: "write_file", args: args("path", "a.go"), agentType: "nobody", want: Allow, wantLayer: "static"},
		{name: "without an agent type the static layer decides", tool: "mcp__x__y", want: Ask, wantLayer: "mode"},
		{name: "the agent veto applies to each sub-command", tool: "bash", args: args("command", "ls -la && make"), agentType: "explore", want: Deny, wantLayer: "agent:explore"},
		{name: "an agent allow does not loosen what the policy asks", tool: "bash", args: args("command", "make build"), agentType: "general", want: Ask, wantLayer: "mode"},
		{name: "a static rule after the agent allow wins", tool: "bash", args: args("command", "ls -la"), agentType: "general", want: Allow, wantRule: "bash(ls *)", wantLayer: "static"},
	})
	if got := p.ModeFor("explore"); got != ModeAlwaysAsk {
		t.Errorf("ModeFor(explore) = %s, want always-ask", got)
	}
	if got := p.ModeFor("general"); got != ModeAutoEdit {
		t.Errorf("ModeFor(general) = %s, want the policy's auto-edit", got)
	}
	// Without an agent type, or with an unknown one, the same call asks:
	// naming a type must not buy more.
	runEvalCases(t, p, []evalCase{
		{name: "the same call without an agent type asks", tool: "bash", args: args("command", "make build"), want: Ask, wantLayer: "mode"},
		{name: "an agent allow counts where the policy allows anyway", tool: "write_file", args: args("path", "a.go"), agentType: "general", want: Allow, wantLayer: "static"},
		{name: "an admin's mode override is the base an agent allow is held to", tool: "bash", args: args("command", "make build"), agentType: "general", mode: ModeYolo, want: Allow},
	})
	// explore's mode is always-ask: a write its rules do not cover asks.
	p2 := mustParse(t, `
mode: yolo
agents:
  explore:
    mode: always-ask
    rules: [ { rule: "read_file", action: allow } ]
`)
	runEvalCases(t, p2, []evalCase{
		{name: "the agent's mode applies to its calls", tool: "write_file", args: args("path", "a"), agentType: "explore", want: Ask, wantLayer: "mode"},
		{name: "the call's mode overrides the agent's", tool: "write_file", args: args("path", "a"), agentType: "explore", mode: ModeYolo, want: Allow, wantLayer: "mode"},
		{name: "other agents use the policy mode", tool: "write_file", args: args("path", "a"), want: Allow, wantLayer: "mode"},
	})
}

func TestPathGlobs(t *testing.T) {
	p := mustParse(t, `
mode: always-ask
rules:
  - { rule: "write_file(src/*)", action: allow }
  - { rule: "write_file(docs/**)", action: allow }
  - { rule: "write_file(**/generated/*.go)", action: allow }
  - { rule: "write_file(*.md)", action: allow }
  - { rule: "write_file(/etc/**)", action: deny }
  - { rule: "write_file(~/.ssh/**)", action: deny }
  - { rule: "write_file($HOME/.config/*)", action: deny }
  - { rule: "write_file(build/)", action: allow }
  - { tool: edit_file, match: { file_path: "*.txt" }, action: allow }
`)
	runEvalCases(t, p, []evalCase{
		{name: "star stays within one segment", tool: "write_file", args: args("path", "src/a/b.go"), want: Ask, wantLayer: "mode"},
		{name: "star matches a file in the directory", tool: "write_file", args: args("path", "src/b.go"), want: Allow},
		{name: "double star crosses segments", tool: "write_file", args: args("path", "docs/a/b/c.txt"), want: Allow},
		{name: "leading double star matches zero directories", tool: "write_file", args: args("path", "generated/x.go"), want: Allow},
		{name: "leading double star matches several directories", tool: "write_file", args: args("path", "a/b/generated/x.go"), want: Allow},
		{name: "a pattern without slash matches the base name anywhere", tool: "write_file", args: args("path", "deep/dir/README.md"), want: Allow, wantRule: "write_file(*.md)"},
		{name: "dotfiles match star", tool: "write_file", args: args("path", "docs/.hidden"), want: Allow},
		{name: "dot files match a base-name pattern", tool: "write_file", args: args("path", "x/.md"), want: Allow},
		{name: "absolute patterns", tool: "write_file", args: args("path", "/etc/nginx/nginx.conf"), want: Deny},
		{name: "paths are cleaned before matching", tool: "write_file", args: args("path", "/tmp/../etc/hosts"), want: Deny, wantRule: "write_file(/etc/**)"},
		{name: "dot-slash is dropped", tool: "write_file", args: args("path", "./src/b.go"), want: Allow},
		{name: "tilde in a pattern expands to home", tool: "write_file", args: args("path", "/home/tester/.ssh/authorized_keys"), want: Deny, wantRule: "write_file(~/.ssh/**)"},
		{name: "tilde in an argument expands too", tool: "write_file", args: args("path", "~/.ssh/config"), want: Deny, wantRule: "write_file(~/.ssh/**)"},
		{name: "HOME in a pattern expands", tool: "write_file", args: args("path", "/home/tester/.config/app.toml"), want: Deny, wantRule: "write_file($HOME/.config/*)"},
		{name: "HOME in an argument expands", tool: "write_file", args: args("path", "$HOME/.config/app.toml"), want: Deny},
		{name: "another user's tilde is not ours", tool: "write_file", args: args("path", "~alice/.ssh/x"), want: Ask, wantLayer: "mode"},
		{name: "a trailing slash means the directory tree", tool: "write_file", args: args("path", "build/out/x.o"), want: Allow, wantRule: "write_file(build/)"},
		{name: "file_path is read like path", tool: "write_file", args: args("file_path", "src/x.go"), want: Allow},
		{name: "both path arguments are judged and the strictest wins", tool: "write_file", args: args("path", "src/x.go", "file_path", "/etc/passwd"), want: Deny},
		{name: "match on file_path also reads path", tool: "edit_file", args: args("path", "notes.txt"), want: Allow, wantRule: "edit_file(file_path: *.txt)"},
		{name: "a relative path that climbs out asks even when allowed", tool: "write_file", args: args("path", "src/../../x.md"), want: Ask, wantLayer: "safety"},
		{name: "a path that stays inside after cleaning is fine", tool: "write_file", args: args("path", "src/../docs/x"), want: Allow},
	})
	d := p.Evaluate(Call{Tool: "write_file", Arguments: args("path", "../x.md")})
	if !strings.Contains(d.Reason, "escapes the working directory") {
		t.Errorf("escape reason = %q", d.Reason)
	}
}

func TestPatternSourcePerTool(t *testing.T) {
	p := mustParse(t, `
mode: always-ask
rules:
  - { rule: "glob(**/.env)", action: deny }
  - { tool: grep, match: { path: "secrets/**" }, action: deny }
  - { tool: grep, match: { pattern: "password*" }, action: ask }
  - { rule: "mcp__fs__read", action: allow }
  - { rule: "mcp__fs__*(*)", action: allow }
  - { rule: "*(/etc/**)", action: deny }
`)
	runEvalCases(t, p, []evalCase{
		{name: "glob pattern argument is matched", tool: "glob", args: args("pattern", "config/.env"), want: Deny},
		{name: "glob path argument is matched", tool: "glob", args: args("pattern", "*.go", "path", ".env"), want: Deny},
		{name: "grep path-only rule reads path", tool: "grep", args: args("pattern", "x", "path", "secrets/a"), want: Deny},
		{name: "grep path-only rule ignores the pattern", tool: "grep", args: args("pattern", "secrets/a", "path", "src"), want: Allow, wantLayer: "mode"},
		{name: "grep pattern-only rule reads pattern", tool: "grep", args: args("pattern", "password=", "path", "src"), want: Ask},
		{name: "MCP tools match by name only: a path glob never matches them", tool: "mcp__fs__read", args: args("path", "/etc/passwd"), want: Allow, wantRule: "mcp__fs__*(*)"},
		{name: "a star pattern on a name-only tool is any arguments", tool: "mcp__fs__write", args: args("path", "x"), want: Allow, wantRule: "mcp__fs__*(*)"},
		{name: "a tool-glob path rule judges every path tool", tool: "read_file", args: args("file_path", "/etc/shadow"), want: Deny, wantRule: "*(/etc/**)"},
	})
}

func TestMissingAndBadArguments(t *testing.T) {
	p := mustParse(t, `
mode: yolo
rules:
  - { rule: "write_file(*)", action: allow }
  - { rule: "read_file", action: allow }
`)
	runEvalCases(t, p, []evalCase{
		{name: "a path tool without a path asks", tool: "write_file", args: json.RawMessage(`{}`), want: Ask, wantLayer: "input"},
		{name: "null arguments are no arguments, so no path", tool: "read_file", args: json.RawMessage(`null`), want: Ask, wantLayer: "input"},
		{name: "a path in an unknown key asks", tool: "write_file", args: json.RawMessage(`{"where": "/etc/x"}`), want: Ask, wantLayer: "input"},
		{name: "a list of paths is judged path by path", tool: "read_file", args: json.RawMessage(`{"path": ["a", "b"]}`), want: Allow},
		{name: "a non-string path asks", tool: "read_file", args: json.RawMessage(`{"path": 5}`), want: Ask, wantLayer: "input"},
		{name: "a list holding a non-string asks", tool: "read_file", args: json.RawMessage(`{"paths": ["a", 5]}`), want: Ask, wantLayer: "input"},
		{name: "arguments that are not an object ask", tool: "read_file", args: json.RawMessage(`"x"`), want: Ask, wantLayer: "input"},
		{name: "invalid JSON asks", tool: "read_file", args: json.RawMessage(`{"path":`), want: Ask, wantLayer: "input"},
		{name: "a shell call without a command asks", tool: "bash", args: json.RawMessage(`{"cwd": "/"}`), want: Ask, wantLayer: "input"},
		{name: "a shell call with a non-string command asks", tool: "bash", args: json.RawMessage(`{"command": {"argv": ["rm"]}}`), want: Ask, wantLayer: "input"},
		{name: "a call without a tool name asks", tool: "", want: Ask, wantLayer: "input"},
		{name: "keys are case-insensitive: PATH is path", tool: "write_file", args: json.RawMessage(`{"PATH": "../../x"}`), want: Ask, wantLayer: "safety"},
		{name: "camelCase keys are path keys: filePath", tool: "write_file", args: json.RawMessage(`{"filePath": "../../x"}`), want: Ask, wantLayer: "safety"},
	})
	// Duplicate keys: every occurrence is judged.
	p2 := mustParse(t, `
mode: auto-edit
rules: [ { rule: "read_file(*.env)", action: deny } ]
`)
	d := p2.Evaluate(Call{Tool: "read_file", Arguments: json.RawMessage(`{"path": ".env", "path": "ok.txt"}`)})
	if d.Action != Deny {
		t.Errorf("duplicate path keys: %s, want deny (%s)", d.Action, d.Reason)
	}
	d = p2.Evaluate(Call{Tool: "read_file", Arguments: json.RawMessage(`{"pa\u0074h": ".env"}`)})
	if d.Action != Deny {
		t.Errorf("escaped key spelling path: %s, want deny", d.Action)
	}
	d = p2.Evaluate(Call{Tool: "read_file", Arguments: json.RawMessage(`{"other": {"path": "x"}, "path": "a/.env"}`)})
	if d.Action != Deny {
		t.Errorf("nested object before path: %s, want deny", d.Action)
	}
}

func TestYoloStillDeniesExplicitDeny(t *testing.T) {
	p := mustParse(t, `
mode: yolo
rules:
  - { rule: "bash(rm *)", action: deny }
  - { rule: "mcp__prod__*", action: ask }
`)
	runEvalCases(t, p, []evalCase{
		{name: "explicit deny denies in yolo", tool: "bash", args: args("command", "rm -rf build"), want: Deny, wantRule: "bash(rm *)"},
		{name: "explicit ask asks in yolo", tool: "mcp__prod__drop", want: Ask},
		{name: "everything else is allowed", tool: "bash", args: args("command", "make"), want: Allow, wantLayer: "mode"},
	})
}

func TestSafetyOverrides(t *testing.T) {
	p := mustParse(t, `
mode: auto-edit
rules:
  - { rule: "write_file", action: allow }
  - { rule: "edit_file(/etc/shadow)", action: deny }
`)
	for _, mode := range []Mode{ModeAlwaysAsk, ModeAutoEdit} {
		d := p.Evaluate(Call{Tool: "write_file", Arguments: args("path", "/etc/passwd"), Mode: mode})
		if d.Action != Ask || d.SafetyOverride == "" || d.Layer != "safety" || d.Grantable {
			t.Errorf("%s: write /etc/passwd = %s override %q layer %s grantable %v, want an ungrantable safety ask", mode, d.Action, d.SafetyOverride, d.Layer, d.Grantable)
		}
		if d.Rule != "" {
			t.Errorf("%s: the allow rule must not be reported as deciding, got %q", mode, d.Rule)
		}
	}
	d := p.Evaluate(Call{Tool: "write_file", Arguments: args("path", "/etc/passwd"), Mode: ModeYolo})
	if d.Action != Allow || d.SafetyOverride != "" {
		t.Errorf("yolo: %s override %q, want allow without override", d.Action, d.SafetyOverride)
	}
	d = p.Evaluate(Call{Tool: "edit_file", Arguments: args("path", "/etc/shadow")})
	if d.Action != Deny {
		t.Errorf("explicit deny with a safety pattern: %s, want deny", d.Action)
	}
	d = p.Evaluate(Call{Tool: "read_file", Arguments: args("path", "/etc/passwd")})
	if d.Action != Allow {
		t.Errorf("reading /etc/passwd is no safety override: %s", d.Action)
	}
	d = p.Evaluate(Call{Tool: "write_file", Arguments: args("path", "/etc/sudoers.d/agent")})
	if d.Action != Ask || !strings.Contains(d.SafetyOverride, "sudoers") {
		t.Errorf("sudoers.d: %s %q", d.Action, d.SafetyOverride)
	}
}

func TestRouteTTLAndApprovalsFromRule(t *testing.T) {
	p := mustParse(t, `
mode: auto-edit
max_ttl: 2h
teams:
  oncall: { members: [carol, dave, erin], approvals_required: 2 }
rules:
  - { rule: "bash(ls *)", action: allow }
  - { rule: "bash(kubectl *)", action: ask, route: oncall, ttl: 10m, approvals_required: 2, reason: "production changes need on-call" }
  - { rule: "mcp__pager__*", action: ask, route: oncall, ttl: 1h }
`)
	d := p.Evaluate(Call{Tool: "mcp__pager__page", Arguments: args()})
	if d.Route != "oncall" || d.TTL != time.Hour || d.ApprovalsRequired != 0 {
		t.Errorf("mcp rule: route %q ttl %s approvals %d", d.Route, d.TTL, d.ApprovalsRequired)
	}
	d = p.Evaluate(Call{Tool: "bash", Arguments: args("command", "make deploy | kubectl apply -f - ; ls")})
	if d.Action != Ask || d.Route != "oncall" || d.TTL != 10*time.Minute || d.ApprovalsRequired != 2 {
		t.Fatalf("pipeline: %s route %q ttl %s approvals %d, want the kubectl rule's (%s)", d.Action, d.Route, d.TTL, d.ApprovalsRequired, d.Reason)
	}
	if d.Rule != "bash(kubectl *)" || !strings.Contains(d.Reason, "production changes need on-call") {
		t.Errorf("pipeline rule %q reason %q", d.Rule, d.Reason)
	}
}

func TestTTL(t *testing.T) {
	p := mustParse(t, "mode: auto-edit\nttl: 2m\nmax_ttl: 30m\n")
	tests := []struct {
		name               string
		requested, ruleTTL time.Duration
		want               time.Duration
	}{
		{"policy default", 0, 0, 2 * time.Minute},
		{"request replaces the default", 10 * time.Minute, 0, 10 * time.Minute},
		{"request is capped by max_ttl", 2 * time.Hour, 0, 30 * time.Minute},
		{"rule ttl", 0, 20 * time.Minute, 20 * time.Minute},
		{"request shortens the rule ttl", time.Minute, 20 * time.Minute, time.Minute},
		{"request cannot extend the rule ttl", 25 * time.Minute, 20 * time.Minute, 20 * time.Minute},
	}
	for _, tc := range tests {
		if got := p.TTL(tc.requested, tc.ruleTTL); got != tc.want {
			t.Errorf("%s: TTL(%s, %s) = %s, want %s", tc.name, tc.requested, tc.ruleTTL, got, tc.want)
		}
	}
	if p.DefaultTTL() != 2*time.Minute || p.MaxTTL() != 30*time.Minute {
		t.Errorf("DefaultTTL %s MaxTTL %s", p.DefaultTTL(), p.MaxTTL())
	}
	d := mustParse(t, "mode: auto-edit\n")
	if d.DefaultTTL() != DefaultTTL || d.MaxTTL() != DefaultMaxTTL {
		t.Errorf("defaults: %s %s", d.DefaultTTL(), d.MaxTTL())
	}
}

func TestTeams(t *testing.T) {
	p := mustParse(t, `
mode: auto-edit
teams:
  oncall: { members: [carol, dave], approvals_required: 2 }
`)
	teams := p.Teams()
	def, ok := teams["default"]
	if !ok || !def.Open() || def.ApprovalsRequired != 1 {
		t.Fatalf("default team = %+v (present %v), want open with 1 approval", def, ok)
	}
	if !def.IsMember("anyone") || def.IsMember("") {
		t.Error("an open team admits any non-empty approver id")
	}
	oc := teams["oncall"]
	if oc.Open() || !oc.IsMember("carol") || oc.IsMember("mallory") || oc.ApprovalsRequired != 2 {
		t.Errorf("oncall = %+v", oc)
	}
	teams["oncall"].Members[0] = "mallory"
	if got, _ := p.Team("oncall"); got.Members[0] != "carol" {
		t.Error("Teams must return a copy")
	}
}

func TestATeamAdmitsByIDOrByAStatedGroup(t *testing.T) {
	p := mustParse(t, `
teams:
  sre:    { members: [carol], groups: [okta-sre], approvals_required: 3 }
  groupy: { groups: [payments-oncall] }
`)
	sre, _ := p.Team("sre")
	if sre.Open() || sre.ApprovalsRequired != 3 {
		t.Fatalf("sre = %+v: a team with groups is not open, and its quorum may exceed its listed members", sre)
	}
	cases := []struct {
		id     string
		groups []string
		want   bool
	}{
		{"carol", nil, true},
		{"someone@example.com", []string{"okta-sre"}, true},
		{"someone@example.com", []string{"everyone", "okta-sre-readonly"}, false},
		{"someone@example.com", nil, false},
		{"", []string{"okta-sre"}, false},
	}
	for _, c := range cases {
		if got := sre.Admits(c.id, c.groups); got != c.want {
			t.Errorf("sre.Admits(%q, %v) = %v, want %v", c.id, c.groups, got, c.want)
		}
	}
	g, _ := p.Team("groupy")
	if g.Open() || g.IsMember("anyone") || !g.Admits("anyone", []string{"payments-oncall"}) {
		t.Errorf("groupy = %+v: a team of groups only admits those groups", g)
	}
	p.Teams()["sre"].Groups[0] = "everyone"
	if got, _ := p.Team("sre"); got.Groups[0] != "okta-sre" {
		t.Error("Teams must copy the groups")
	}
}

func TestVersion(t *testing.T) {
	a := mustParse(t, "mode: auto-edit\n")
	b := mustParse(t, "mode: auto-edit\n")
	c := mustParse(t, "mode: yolo\n")
	if a.Version() != b.Version() || a.Version() == c.Version() || len(a.Version()) != 16 {
		t.Errorf("versions %q %q %q: want equal for equal sources, different otherwise, 16 hex digits", a.Version(), b.Version(), c.Version())
	}
}
