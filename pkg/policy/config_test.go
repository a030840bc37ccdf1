package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // the whole Error() text
	}{
		{
			name: "an unknown action points at the value",
			src: `mode: auto-edit
rules:
  - rule: "bash(ls *)"
    action: allow
  - rule: "bash(rm *)"
    action: alow
`,
			want: `policy.yaml:6:13: rules[1].action: unknown action "alow" (want allow, deny or ask)`,
		},
		{
			name: "an unknown action in flow style",
			src: `rules:
  - { rule: "bash(ls *)", action: alow }
`,
			want: `policy.yaml:2:35: rules[0].action: unknown action "alow" (want allow, deny or ask)`,
		},
		{
			name: "a misspelt top-level key",
			src:  "mode: auto-edit\nrule:\n  - { rule: bash, action: deny }\n",
			want: `policy.yaml:2:1: unknown key "rule" (want mode, home, ttl, max_ttl, rules, agents, teams, tools, programs, workspace, pagers, session_grants, grants, step_up or breakers)`,
		},
		{
			name: "a misspelt rule key",
			src:  "rules:\n  - { rule: bash, acton: deny }\n",
			want: `policy.yaml:2:19: rules[0]: unknown key "acton" (want rule, tool, match, action, route, ttl, approvals_required, reason, escalation, grantable, max_age or step_up)`,
		},
		{
			name: "a missing action",
			src:  "rules:\n  - { rule: bash }\n",
			want: `policy.yaml:2:5: rules[0]: missing action: (want allow, deny or ask)`,
		},
		{
			name: "an unknown mode",
			src:  "mode: auto_edit\n",
			want: `policy.yaml:1:7: mode: unknown mode "auto_edit" (want always-ask, auto-edit or yolo)`,
		},
		{
			name: "an unknown agent mode",
			src:  "agents:\n  explore:\n    mode: careful\n",
			want: `policy.yaml:3:11: agents.explore.mode: unknown mode "careful" (want always-ask, auto-edit or yolo)`,
		},
		{
			name: "an unclosed pattern",
			src:  "rules:\n  - { rule: \"bash(git diff *\", action: allow }\n",
			want: `policy.yaml:2:13: rules[0].rule: unbalanced parentheses in "bash(git diff *": the pattern must end with ')'`,
		},
		{
			name: "a closing parenthesis without an opening one",
			src:  "rules:\n  - { rule: \"bash)\", action: allow }\n",
			want: `policy.yaml:2:13: rules[0].rule: unbalanced parentheses in "bash)": ')' without '('`,
		},
		{
			name: "unbalanced parentheses inside the pattern",
			src:  "rules:\n  - { rule: \"bash(echo ))\", action: allow }\n",
			want: `policy.yaml:2:13: rules[0].rule: unbalanced parentheses in "bash(echo ))"`,
		},
		{
			name: "an empty pattern",
			src:  "rules:\n  - { rule: \"bash()\", action: allow }\n",
			want: `policy.yaml:2:13: rules[0].rule: empty pattern in "bash()" (write bash alone to match any arguments)`,
		},
		{
			name: "a pattern without a tool",
			src:  "rules:\n  - { rule: \"(ls)\", action: allow }\n",
			want: `policy.yaml:2:13: rules[0].rule: missing tool name before '(' in "(ls)"`,
		},
		{
			name: "an empty rule",
			src:  "rules:\n  - { rule: \"\", action: allow }\n",
			want: `policy.yaml:2:13: rules[0].rule: must not be empty`,
		},
		{
			name: "a bad tool-name glob",
			src:  "rules:\n  - { rule: \"mcp__[x\", action: deny }\n",
			want: "policy.yaml:2:13: rules[0].rule: invalid tool-name glob \"mcp__[x\": glob: syntax error at 7: unexpected end of input",
		},
		{
			name: "a bad path glob is reported at its rule",
			src:  "mode: auto-edit\nrules:\n  - { rule: read_file, action: allow }\n  - { rule: \"read_file({a,b)\", action: deny }\n",
			want: "policy.yaml:4:13: rules[1].rule: invalid path glob \"{a,b\": glob: syntax error at 4: unclosed `{`",
		},
		{
			name: "a path glob with a POSIX class, which the path matcher reads as characters",
			src:  "mode: auto-edit\nrules:\n  - { rule: read_file, action: allow }\n  - { rule: \"read_file(**/.[[:alpha:]]nv)\", action: deny }\n",
			want: "policy.yaml:4:13: rules[1].rule: invalid path glob \"**/.[[:alpha:]]nv\": the bracket expression at offset 4 holds a POSIX class, equivalence class or collating symbol, which path globs do not support (write a range or the characters: [a-z], [abc])",
		},
		{
			name: "a shell pattern with a bracket expression shells read differently",
			src:  "rules:\n  - { rule: \"bash(cat .[[=e=]]nv)\", action: deny }\n",
			want: "policy.yaml:2:13: rules[0].rule: invalid shell pattern \"cat .[[=e=]]nv\": the bracket expression at offset 5 is not one every shell reads alike (a [:class:] of a known name and [.c.] of one character are; [=c=], whose end bash reads differently, and a class at either end of a range are not)",
		},
		{
			name: "an unknown tool group",
			src:  "rules:\n  - { rule: \"@files2(*.env)\", action: deny }\n",
			want: `policy.yaml:2:13: rules[0].rule: unknown tool group "@files2" (want @read, @write, @exec, @mcp, @shell or @files)`,
		},
		{
			name: "an argument pattern on a tool matched by name only",
			src:  "rules:\n  - { rule: \"mcp__fs__read(*.env)\", action: deny }\n",
			want: `policy.yaml:2:13: rules[0].rule: tool mcp__fs__read is matched by name only (MCP and unknown tools have no argument patterns); drop the pattern, or declare the tool under tools.paths or tools.shell`,
		},
		{
			name: "rule and tool together",
			src:  "rules:\n  - { rule: bash, tool: bash, action: deny }\n",
			want: `policy.yaml:2:19: rules[0]: use either rule: or tool:, not both`,
		},
		{
			name: "match with two arguments",
			src:  "rules:\n  - { tool: write_file, match: { path: a, file_path: b }, action: deny }\n",
			want: `policy.yaml:2:32: rules[0].match: match: takes exactly one argument, got 2`,
		},
		{
			name: "match on an unknown argument",
			src:  "rules:\n  - { tool: write_file, match: { name: a }, action: deny }\n",
			want: `policy.yaml:2:34: rules[0].match: cannot match argument "name" (want path, file_path, notebook_path, pattern, command, cmd or script)`,
		},
		{
			name: "match on an argument the tool does not have",
			src:  "rules:\n  - { tool: bash, match: { path: a }, action: deny }\n",
			want: `policy.yaml:2:34: rules[0].match.path: bash patterns match its sub-commands, not path`,
		},
		{
			name: "match on an argument the group does not have",
			src:  "rules:\n  - { tool: \"@shell\", match: { path: \"*.env\" }, action: deny }\n",
			want: `policy.yaml:2:38: rules[0].match.path: @shell tools have no path argument (use @files)`,
		},
		{
			name: "a route to an undefined team",
			src:  "teams:\n  oncall: { members: [carol] }\nrules:\n  - { rule: bash, action: ask, route: on-call }\n",
			want: `policy.yaml:4:39: rules[0].route: unknown team "on-call" (defined: default, oncall)`,
		},
		{
			name: "a route on an allow rule",
			src:  "rules:\n  - { rule: bash, action: allow, route: default }\n",
			want: `policy.yaml:2:34: rules[0]: route only applies to ask rules (this rule allows)`,
		},
		{
			name: "approvals_required of zero",
			src:  "rules:\n  - { rule: bash, action: ask, approvals_required: 0 }\n",
			want: `policy.yaml:2:52: rules[0].approvals_required: must be at least 1, got 0`,
		},
		{
			name: "approvals_required larger than the team",
			src:  "teams:\n  oncall: { members: [carol, dave] }\nrules:\n  - { rule: bash, action: ask, route: oncall, approvals_required: 3 }\n",
			want: `policy.yaml:4:67: rules[0].approvals_required: approvals_required 3 exceeds the 2 members of team oncall`,
		},
		{
			name: "a team quorum larger than the team",
			src:  "teams:\n  oncall: { members: [carol], approvals_required: 2 }\n",
			want: `policy.yaml:2:51: teams.oncall.approvals_required: approvals_required 2 exceeds the team's 1 members`,
		},
		{
			name: "a ttl that is not a duration",
			src:  "rules:\n  - { rule: bash, action: ask, ttl: 5 minutes }\n",
			want: `policy.yaml:2:37: rules[0].ttl: invalid duration "5 minutes" (want a Go duration such as 90s, 5m or 1h30m)`,
		},
		{
			name: "a negative ttl",
			src:  "ttl: -5m\n",
			want: `policy.yaml:1:6: ttl: duration must be positive, got -5m`,
		},
		{
			name: "a rule ttl above max_ttl",
			src:  "max_ttl: 10m\nrules:\n  - { rule: bash, action: ask, ttl: 1h }\n",
			want: `policy.yaml:3:37: rules[0].ttl: ttl 1h0m0s exceeds max_ttl 10m0s`,
		},
		{
			name: "a team without members",
			src:  "teams:\n  oncall: { members: [] }\n",
			want: `policy.yaml:2:3: teams.oncall: team "oncall" has no members or groups (only the default team may be open to every approver)`,
		},
		{
			name: "a group listed twice",
			src:  "teams:\n  oncall: { groups: [okta-sre, okta-sre] }\n",
			want: `policy.yaml:2:32: teams.oncall.groups[1]: group "okta-sre" is listed twice`,
		},
		{
			name: "an empty group",
			src:  "teams:\n  oncall: { groups: [\"\"] }\n",
			want: `policy.yaml:2:22: teams.oncall.groups[0]: must not be empty`,
		},
		{
			name: "a team name that is not a subject token",
			src:  "teams:\n  on.call: { members: [carol] }\n",
			want: `policy.yaml:2:3: teams: invalid team name "on.call" (no '.', '*', '>' or whitespace: it becomes a NATS subject token)`,
		},
		{
			name: "a member listed twice",
			src:  "teams:\n  oncall: { members: [carol, carol] }\n",
			want: `policy.yaml:2:30: teams.oncall.members[1]: member "carol" is listed twice`,
		},
		{
			name: "an unknown tier",
			src:  "tools:\n  tiers: { my_tool: safe }\n",
			want: `policy.yaml:2:21: tools.tiers.my_tool: unknown tier "safe" (want read, write, exec or mcp)`,
		},
		{
			name: "a tool declared as shell and path",
			src:  "tools:\n  shell: [runner]\n  paths: [Runner]\n",
			want: `policy.yaml:3:11: tools.paths[0]: tool "Runner" is declared both in tools.shell and tools.paths`,
		},
		{
			name: "a duplicate key",
			src:  "mode: yolo\nmode: always-ask\n",
			want: `policy.yaml:2:1: duplicate key "mode" (first at line 1)`,
		},
		{
			name: "a YAML alias",
			src:  "rules:\n  - &r { rule: bash, action: deny }\n  - *r\n",
			want: `policy.yaml:3:5: rules: YAML aliases (*r) are not supported in policy files; write the value out`,
		},
		{
			name: "a rule that is not a mapping",
			src:  "rules:\n  - \"bash(ls)\"\n",
			want: `policy.yaml:2:5: rules[0]: want a mapping, got "bash(ls)"`,
		},
		{
			name: "rules that are not a list",
			src:  "rules: { rule: bash, action: deny }\n",
			want: `policy.yaml:1:8: rules: want a list, got a mapping`,
		},
		{
			name: "a YAML syntax error has its line",
			src:  "mode: auto-edit\nrules:\n  - { rule: bash, action: deny\n",
			want: `policy.yaml:2: invalid YAML: did not find expected ',' or '}'`,
		},
		{
			name: "an empty file",
			src:  "\n# nothing here\n",
			want: `policy.yaml: empty policy file`,
		},
		{
			name: "two documents",
			src:  "mode: yolo\n---\nmode: always-ask\n",
			want: `policy.yaml:2: more than one YAML document (---) in the policy file`,
		},
		{
			name: "a relative home",
			src:  "home: alice\n",
			want: `policy.yaml:1:7: home: home must be an absolute path, got "alice"`,
		},
		{
			name: "an agent type defined twice",
			src:  "agents:\n  explore: {}\n  Explore: {}\n",
			want: `policy.yaml:3:3: agents: agent type "Explore" is defined twice (agent types are case-insensitive)`,
		},
		{
			name: "an agent mode looser than the policy's",
			src:  "mode: auto-edit\nagents:\n  ci:\n    mode: yolo\n",
			want: `policy.yaml:4:11: agents.ci.mode: mode yolo allows more than the policy mode auto-edit: an agent type is named by the agent itself, so its mode may only be as strict or stricter (always-ask, then auto-edit, then yolo)`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(tc.src), "policy.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded (%v), want %s", p, tc.want)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v is not a *ConfigError", err, err)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got: %s\nwant: %s", err, tc.want)
			}
		})
	}
}

func TestParseHomeExpansion(t *testing.T) {
	t.Run("without home: the user's home directory is used", func(t *testing.T) {
		t.Setenv("HOME", "/home/someone")
		p, err := Parse([]byte("mode: always-ask\nrules: [ { rule: \"write_file(~/.ssh/*)\", action: deny } ]\n"), "p.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if d := p.Evaluate(Call{Tool: "write_file", Arguments: args("path", "/home/someone/.ssh/id_rsa")}); d.Action != Deny {
			t.Errorf("got %s, want deny", d.Action)
		}
	})
	t.Run("a pattern with ~ and no known home is an error", func(t *testing.T) {
		t.Setenv("HOME", "")
		_, err := Parse([]byte("rules:\n  - { rule: \"write_file(~/.ssh/*)\", action: deny }\n"), "p.yaml")
		want := `p.yaml:2:13: rules[0].rule: cannot expand "~/.ssh/*": no home directory is known (set home:)`
		if err == nil || err.Error() != want {
			t.Errorf("error = %v, want %s", err, want)
		}
	})
}

func TestParseAcceptsTheDocumentedShape(t *testing.T) {
	src := `
mode: auto-edit               # always-ask | auto-edit | yolo
rules:                        # within a layer the last matching rule wins
  - { rule: "bash(git diff *)", action: allow }
  - { rule: "read_file(**/.env)", action: deny }
  - { rule: "mcp__github__*", action: ask }
  - { rule: "bash(kubectl *)", action: ask, route: oncall, ttl: 10m, approvals_required: 2 }
  - { tool: write_file, match: { path: "*.md" }, action: allow }
agents:
  explore:
    mode: always-ask
    rules:
      - { rule: "*", action: deny }
      - { rule: "read_file", action: allow }
teams:
  default: { members: [alice, bob] }
  oncall:  { members: [carol, dave, erin], approvals_required: 2 }
tools:
  tiers: { my_tool: read }
  shell: [bash, sh, shell, run_shell]
`
	p, err := Parse([]byte(src), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode() != ModeAutoEdit || p.ModeFor("explore") != ModeAlwaysAsk || p.TierOf("my_tool") != TierRead {
		t.Errorf("mode %s, explore %s, my_tool %s", p.Mode(), p.ModeFor("explore"), p.TierOf("my_tool"))
	}
	if def, _ := p.Team("default"); def.Open() || !def.IsMember("alice") {
		t.Errorf("default team = %+v", def)
	}
	if got := p.AgentTypes(); len(got) != 1 || got[0] != "explore" {
		t.Errorf("AgentTypes = %q", got)
	}
	d := p.Evaluate(Call{Tool: "write_file", Arguments: args("file_path", "docs/x.md")})
	if d.Rule != "write_file(path: *.md)" || d.Action != Allow {
		t.Errorf("match rule: %s by %q", d.Action, d.Rule)
	}
}

func TestDefaultPolicy(t *testing.T) {
	p := Default()
	if p != Default() {
		t.Error("Default must return the same policy every time")
	}
	if p.Mode() != ModeAutoEdit {
		t.Errorf("mode %s", p.Mode())
	}
	if def, ok := p.Team("default"); !ok || !def.Open() {
		t.Errorf("default team %+v", def)
	}
	runEvalCases(t, p, []evalCase{
		{name: "ls is allowed", tool: "bash", args: cmd("ls -la"), want: Allow},
		{name: "a read-only pipeline is allowed", tool: "bash", args: cmd("git log --oneline | head -5 && git status"), want: Allow},
		{name: "git diff writing a file asks", tool: "bash", args: cmd("git diff --output=/tmp/x"), want: Ask},
		{name: "other commands ask", tool: "bash", args: cmd("npm install"), want: Ask},
		{name: "other shell tools get the same rules", tool: "run_shell", args: cmd("pwd"), want: Allow},
		{name: "cat of a .env is denied like read_file of it", tool: "bash", args: cmd("cat app/.env"), want: Deny},
		{name: "a command that only mentions a .env asks", tool: "bash", args: cmd("echo app/.env"), want: Ask},
		{name: "a redirect into .env is denied", tool: "bash", args: cmd("echo KEY=1 >> .env"), want: Deny},
		{name: "reading .env is denied", tool: "read_file", args: args("path", "services/api/.env"), want: Deny},
		{name: "reading .env.local is denied", tool: "Read", args: args("file_path", ".env.local"), want: Deny},
		{name: "reading .env.example is allowed", tool: "read_file", args: args("path", "services/api/.env.example"), want: Allow},
		{name: "writing .env is denied", tool: "write_file", args: args("path", ".env"), want: Deny},
		{name: "grep in .env is denied", tool: "grep", args: args("pattern", "KEY", "path", ".env"), want: Deny},
		{name: "grep for the word env in the code is fine", tool: "grep", args: args("pattern", "*.env", "path", "src"), want: Allow},
		{name: "SSH keys are denied", tool: "read_file", args: args("path", "/home/u/.ssh/id_ed25519"), want: Deny},
		{name: "ordinary reads are allowed", tool: "read_file", args: args("path", "src/main.go"), want: Allow},
		{name: "ordinary writes are allowed in auto-edit", tool: "edit", args: args("file_path", "src/main.go"), want: Allow},
		{name: "writes into .git ask", tool: "write_file", args: args("path", ".git/hooks/pre-commit"), want: Ask},
		{name: "a .git file (a gitfile redirect) asks", tool: "write_file", args: args("path", "sub/.git"), want: Ask},
		{name: "a .git file at the root asks", tool: "Write", args: args("file_path", ".git"), want: Ask},
		{name: "a gitfile made by the shell asks", tool: "bash", args: cmd("echo gitdir: ../evilgit > sub/.git"), want: Ask},
		{name: "a gitfile moved into place asks", tool: "bash", args: cmd("mv evilgit sub/.git"), want: Ask},
		{name: "a gitfile linked into place asks", tool: "bash", args: cmd("ln -s ../evilgit sub/.git"), want: Ask},
		{name: "writing a file named .gitignore stays allowed", tool: "write_file", args: args("path", "sub/.gitignore"), want: Allow},
		{name: "MCP tools ask", tool: "mcp__github__create_issue", want: Ask},
	})
	if !strings.Contains(string(DefaultYAML()), "mode: auto-edit") {
		t.Error("DefaultYAML does not return the source")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(good, []byte("mode: yolo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Load(good)
	if err != nil || p.Mode() != ModeYolo || p.File() != good {
		t.Fatalf("Load = %v, %v", p, err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("mode: yolo\n"+strings.Repeat("#", MaxFileSize)), 0o600); err != nil {
		t.Fatal(err)
	}
	var ce *ConfigError
	if _, err := Load(big); !errors.As(err, &ce) {
		t.Errorf("oversized file: %v, want a ConfigError", err)
	}
}
