package policy

import (
	"encoding/json"
	"testing"
)

// Glob-valued arguments of the agents' file tools (red team B, class 6)
// are judged as reads of every file they can match under the directory
// the tool searches, and the path arguments of read- and write-tier tools
// judged by name (class 8) meet the deny and ask rules of the file tools,
// under the three policies the red team used: the corpus policy (C), the
// built-in one (B) and the worked example (E).
func TestFileToolGlobArguments(t *testing.T) {
	c, err := Load("testdata/corpus_policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Load("testdata/example_policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := Default()
	policies := []struct {
		name string
		p    *Policy
	}{{"C", c}, {"B", b}, {"E", e}}
	const cwd = "/home/dev/proj"
	tests := []struct {
		name, tool, args string
		want             [3]Action // C, B, E
	}{
		// The red team's calls.
		{"Grep glob .e?v", "Grep", `{"pattern":"KEY","path":"/home/dev/proj","glob":".e?v"}`, [3]Action{Deny, Deny, Deny}},
		{"Grep glob [.]env", "Grep", `{"pattern":"KEY","path":"/home/dev/proj","glob":"[.]env"}`, [3]Action{Deny, Deny, Deny}},
		{"Grep glob **/.e?v", "Grep", `{"pattern":"KEY","path":"/home/dev/proj","glob":"**/.e?v"}`, [3]Action{Deny, Deny, Deny}},
		{"Grep glob with a POSIX class asks", "Grep", `{"pattern":"KEY","glob":".[[:alpha:]]nv"}`, [3]Action{Ask, Ask, Ask}},
		{"Grep glob in upper case", "Grep", `{"pattern":"KEY","glob":".E?V"}`, [3]Action{Deny, Deny, Deny}},
		{"Grep glob alternation", "Grep", `{"pattern":"KEY","glob":"*.{go,env}"}`, [3]Action{Deny, Deny, Deny}},
		{"Grep glob split on white space", "Grep", `{"pattern":"KEY","glob":"*.go .e?v"}`, [3]Action{Deny, Deny, Deny}},
		{"Grep type sh reads .env", "Grep", `{"pattern":"KEY","type":"sh"}`, [3]Action{Deny, Deny, Deny}},
		{"Grep type the policy does not know asks", "Grep", `{"pattern":"KEY","type":"fortran"}`, [3]Action{Ask, Ask, Ask}},
		{"Grep with an unknown string argument asks", "Grep", `{"pattern":"KEY","globs":".env"}`, [3]Action{Ask, Ask, Ask}},
		{"opencode grep include", "grep", `{"pattern":"KEY","include":"*.{js,e?v}"}`, [3]Action{Deny, Deny, Deny}},
		{"search_file_content include .e?v", "search_file_content", `{"pattern":"KEY","include":".e?v"}`, [3]Action{Deny, Deny, Deny}},
		{"search_file_content include .s?h/* under home", "search_file_content", `{"pattern":"KEY","dir_path":"/home/dev","include":".s?h/*"}`, [3]Action{Deny, Deny, Allow}},
		{"Cline search_files file_pattern", "search_files", `{"path":".","regex":"KEY","file_pattern":".e?v"}`, [3]Action{Deny, Deny, Deny}},
		{"Cursor grep_search include_pattern", "grep_search", `{"query":"KEY","include_pattern":".e?v"}`, [3]Action{Deny, Deny, Deny}},
		{"Cursor codebase_search target_directories", "codebase_search", `{"query":"KEY","target_directories":["/home/dev/.s?h"]}`, [3]Action{Deny, Deny, Allow}},
		{"Cursor codebase_search of the home directory", "codebase_search", `{"query":"KEY","target_directories":["/home/dev"]}`, [3]Action{Deny, Allow, Allow}},
		{"Cursor codebase_search target_directories .env", "codebase_search", `{"query":"KEY","target_directories":["app/.e?v"]}`, [3]Action{Deny, Deny, Deny}},
		{"read_many_files paths glob into ~/.ssh", "read_many_files", `{"paths":["/home/dev/.s?h/id_*"]}`, [3]Action{Deny, Deny, Allow}},
		{"read_many_files paths class into ~/.ssh", "read_many_files", `{"paths":["/home/dev/.[s]sh/id_*"]}`, [3]Action{Deny, Deny, Allow}},
		{"read_many_files include .env", "read_many_files", `{"paths":["README.md"],"include":[".env"]}`, [3]Action{Deny, Deny, Deny}},
		{"read_many_files include .e?v", "read_many_files", `{"paths":["README.md"],"include":["**/.e?v"]}`, [3]Action{Deny, Deny, Deny}},
		{"read_many_files alternation", "read_many_files", `{"paths":["{.env,README.md}"]}`, [3]Action{Deny, Deny, Deny}},
		{"read_many_files extended glob asks", "read_many_files", `{"paths":["README.md"],"include":["@(.env)"]}`, [3]Action{Ask, Ask, Ask}},
		{"read_many_files brace range asks", "read_many_files", `{"paths":["x{1..3}"]}`, [3]Action{Ask, Ask, Ask}},
		{"read_many_files .. after a wildcard asks", "read_many_files", `{"paths":["src/*/../../.env"]}`, [3]Action{Ask, Ask, Ask}},
		{"Gemini glob pattern into ~/.ssh", "glob", `{"pattern":"/home/dev/.s?h/*"}`, [3]Action{Deny, Deny, Allow}},
		{"Claude Glob pattern under home", "Glob", `{"pattern":".s?h/*","path":"/home/dev"}`, [3]Action{Deny, Deny, Allow}},
		{"Claude Glob pattern .e?v", "Glob", `{"pattern":"**/.e?v"}`, [3]Action{Deny, Deny, Deny}},
		// Class 8: E declares mcp__docs__* read and denies @files(*.env).
		{"read-tier MCP tool path .env", "mcp__docs__read_file", `{"path":"/home/dev/proj/.env"}`, [3]Action{Ask, Ask, Deny}},
		{"read-tier MCP tool directory", "mcp__docs__search", `{"query":"x","directory":"/home/dev/proj/app/.env"}`, [3]Action{Ask, Ask, Deny}},
		{"read-tier MCP tool path in another spelling", "mcp__docs__read_file", `{"FilePath":"app/.env"}`, [3]Action{Ask, Ask, Deny}},
		{"read-tier MCP tool path that is not a string asks", "mcp__docs__read_file", `{"path":{"x":1}}`, [3]Action{Ask, Ask, Ask}},

		// Ordinary calls stay allowed.
		{"Grep glob *.go", "Grep", `{"pattern":"KEY","glob":"*.go"}`, [3]Action{Allow, Allow, Allow}},
		{"Grep glob *.{ts,tsx}", "Grep", `{"pattern":"KEY","glob":"*.{ts,tsx}","output_mode":"content","-n":true,"-i":true,"-C":2,"head_limit":20}`, [3]Action{Allow, Allow, Allow}},
		{"Grep glob that excludes .env", "Grep", `{"pattern":"KEY","glob":"!*.env"}`, [3]Action{Allow, Allow, Allow}},
		{"Grep type go", "Grep", `{"pattern":"KEY","type":"go","path":"src"}`, [3]Action{Allow, Allow, Allow}},
		{"Glob src/**/*.ts", "Glob", `{"pattern":"src/**/*.ts"}`, [3]Action{Allow, Allow, Allow}},
		{"Glob **/*.{ts,tsx}", "Glob", `{"pattern":"**/*.{ts,tsx}","path":"/home/dev/proj"}`, [3]Action{Allow, Allow, Allow}},
		{"Glob **/*", "Glob", `{"pattern":"**/*"}`, [3]Action{Allow, Allow, Allow}},
		{"read_many_files README.md", "read_many_files", `{"paths":["README.md"]}`, [3]Action{Allow, Allow, Allow}},
		{"read_many_files globs and excludes", "read_many_files", `{"paths":["src/**/*.ts","docs/*.md"],"exclude":["**/*.env"],"recursive":true,"useDefaultExcludes":true}`, [3]Action{Allow, Allow, Allow}},
		{"search_file_content include *.ts", "search_file_content", `{"pattern":"KEY","include":"*.ts"}`, [3]Action{Allow, Allow, Allow}},
		{"codebase_search of src", "codebase_search", `{"query":"KEY","target_directories":["src/**","lib"],"explanation":"x"}`, [3]Action{Allow, Allow, Allow}},
		{"codebase_search without directories", "codebase_search", `{"query":"KEY"}`, [3]Action{Allow, Allow, Allow}},
		{"grep_search include *.ts", "grep_search", `{"query":"KEY","include_pattern":"*.ts","exclude_pattern":"*.env","explanation":"x"}`, [3]Action{Allow, Allow, Allow}},
		{"read-tier MCP tool of a plain file", "mcp__docs__read_file", `{"path":"docs/guide.md"}`, [3]Action{Ask, Ask, Allow}},
		{"read-tier MCP tool without a path", "mcp__docs__search", `{"q":"retry policy"}`, [3]Action{Ask, Ask, Allow}},
		{"read-tier MCP tool .env.example", "mcp__docs__read_file", `{"path":".env.example"}`, [3]Action{Ask, Ask, Allow}},
	}
	for _, tt := range tests {
		for i, pol := range policies {
			d := pol.p.Evaluate(Call{Tool: tt.tool, Arguments: json.RawMessage(tt.args), Cwd: cwd})
			if d.Action != tt.want[i] {
				t.Errorf("%s [%s]: %s %s → %s (layer %s: %s), want %s", tt.name, pol.name, tt.tool, tt.args, d.Action, d.Layer, d.Reason, tt.want[i])
			}
		}
	}
}

// A glob argument the policy cannot read asks without a grant: a grant of
// the tool must not settle what nobody could judge.
func TestFileToolGlobFloorIsUngrantable(t *testing.T) {
	p := mustParse(t, "mode: auto-edit\n")
	for _, args := range []string{
		`{"pattern":"KEY","glob":".[[:alpha:]]nv"}`,
		`{"pattern":"KEY","glob":"{a"}`,
		`{"pattern":"KEY","type":"fortran"}`,
		`{"pattern":"KEY","filter":"x"}`,
	} {
		d := p.Evaluate(Call{Tool: "Grep", Arguments: json.RawMessage(args), Cwd: "/home/dev/proj"})
		if d.Action != Ask || d.Grantable {
			t.Errorf("Grep %s → %s grantable=%v (%s), want an ungrantable ask", args, d.Action, d.Grantable, d.Reason)
		}
	}
}

// Relative rule patterns meet a tool's glob under the working directory;
// within the rules the last match wins, as for the tool's path.
func TestFileToolGlobRelativeRules(t *testing.T) {
	p := mustParse(t, `
mode: always-ask
rules:
  - { rule: "Grep", action: allow }
  - { rule: "read_file(secrets/**)", action: deny }
`)
	for _, tt := range []struct {
		args string
		want Action
	}{
		{`{"pattern":"KEY","glob":"secrets/*"}`, Deny},
		{`{"pattern":"KEY","glob":"secr?ts/*.yaml"}`, Deny},
		{`{"pattern":"KEY","glob":"src/*.go"}`, Allow},
	} {
		d := p.Evaluate(Call{Tool: "Grep", Arguments: json.RawMessage(tt.args), Cwd: "/home/dev/proj"})
		if d.Action != tt.want {
			t.Errorf("Grep %s → %s (%s), want %s", tt.args, d.Action, d.Reason, tt.want)
		}
	}
	// Glob's pattern names paths under its path, even a plain one.
	for _, tt := range []struct {
		args string
		want Action
	}{
		{`{"pattern":"../secrets/k.yaml","path":"/home/dev/proj/src"}`, Deny},
		{`{"pattern":"../secr?ts/*","path":"/home/dev/proj/src"}`, Deny},
		{`{"pattern":"main.go","path":"/home/dev/proj/src"}`, Allow},
	} {
		d := p.Evaluate(Call{Tool: "Glob", Arguments: json.RawMessage(tt.args), Cwd: "/home/dev/proj"})
		if d.Action != tt.want {
			t.Errorf("Glob %s → %s (%s), want %s", tt.args, d.Action, d.Reason, tt.want)
		}
	}
	for _, tt := range []struct {
		args string
		want Action
	}{
		{`{"paths":["/home/dev/proj/secr?ts/*"]}`, Deny},
		{`{"paths":["secr?ts/*"]}`, Deny},
		{`{"paths":["/home/dev/proj/src/*.go"]}`, Allow},
	} {
		d := p.Evaluate(Call{Tool: "read_many_files", Arguments: json.RawMessage(tt.args), Cwd: "/home/dev/proj"})
		if d.Action != tt.want {
			t.Errorf("read_many_files %s → %s (%s), want %s", tt.args, d.Action, d.Reason, tt.want)
		}
	}
}

// Class 8: a tool declared read or write tier is judged on its
// well-known path arguments by the deny and ask rules of that tier's file
// tools (and @files), never allowed by them beyond what its name gets.
func TestNamedToolPathArguments(t *testing.T) {
	p := mustParse(t, `
mode: always-ask
tools:
  tiers: { "mcp__fs__*": write, "mcp__docs__*": read, acme_read: read }
rules:
  - { rule: "mcp__docs__*", action: allow }
  - { rule: "write_file(**/.env)", action: deny }
  - { rule: "@files(**/.ssh/**)", action: deny }
  - { rule: "@write(**/.git/**)", action: ask }
  - { rule: "@write(src/**)", action: allow }
`)
	const cwd = "/home/dev/proj"
	for _, tt := range []struct {
		tool, args string
		want       Action
	}{
		{"mcp__fs__write", `{"path":"app/.env","content":"x"}`, Deny},
		{"mcp__fs__write", `{"file":"/home/dev/.ssh/authorized_keys"}`, Deny},
		{"mcp__fs__mkdir", `{"directory":".git/hooks"}`, Ask},
		// The allow of @write does not reach a tool judged by name: the
		// mode (always-ask) still asks for the write tier.
		{"mcp__fs__write", `{"path":"src/a.go"}`, Ask},
		{"mcp__docs__read", `{"paths":["README.md","/home/dev/.ssh/id_rsa"]}`, Deny},
		{"mcp__docs__read", `{"path":"README.md"}`, Allow},
		{"mcp__docs__search", `{"dir":"/home/dev"}`, Allow},
		{"mcp__docs__search", `{"dir":"/home/dev/.ssh"}`, Deny},
		{"acme_read", `{"filename":"/home/dev/.ssh/config"}`, Deny},
		// The ends of a move are not path keys of a tool judged by name.
		{"mcp__docs__read", `{"from":"/home/dev/.ssh/id_rsa"}`, Allow},
		// An MCP tool of the mcp tier is still judged by name alone.
		{"mcp__github__get_file", `{"path":".env"}`, Ask},
	} {
		d := p.Evaluate(Call{Tool: tt.tool, Arguments: json.RawMessage(tt.args), Cwd: cwd})
		if d.Action != tt.want {
			t.Errorf("%s %s → %s (layer %s: %s), want %s", tt.tool, tt.args, d.Action, d.Layer, d.Reason, tt.want)
		}
	}
}
