package policy

import (
	"encoding/json"
	"testing"
)

// A sub-command that makes a call read-tier (str_replace_editor's view)
// chooses the group rules of the read tier, and the per-tool cache of
// group rules keeps the two tiers apart whichever call comes first.
func TestEditorViewAndEditMeetTheirOwnTiersGroupRules(t *testing.T) {
	p := mustParse(t, `
mode: auto-edit
rules:
  - { rule: "@write(**/.git/**)", action: ask }
  - { rule: "@read(**/*.pem)", action: deny }
`)
	calls := []struct {
		name, args string
		want       Action
	}{
		{"a view of .git/config is a read", `{"command":"view","path":".git/config"}`, Allow},
		{"an edit of .git/config is a write", `{"command":"str_replace","path":".git/config","old_str":"a","new_str":"b"}`, Ask},
		{"a view of .git/config again", `{"command":"view","path":".git/config"}`, Allow},
		{"a view of a key is denied by @read", `{"command":"view","path":"tls/key.pem"}`, Deny},
		{"an edit of a key reads it too", `{"command":"insert","path":"tls/key.pem","insert_line":0,"new_str":"x"}`, Deny},
		{"creating a key file reads nothing", `{"command":"create","path":"tls/key.pem","file_text":"x"}`, Allow},
	}
	for _, tool := range []string{"str_replace_editor", "str_replace_based_edit_tool"} {
		for _, c := range calls {
			d := p.Evaluate(Call{Tool: tool, Arguments: json.RawMessage(c.args), Cwd: "/home/dev/proj"})
			if d.Action != c.want {
				t.Errorf("%s: %s %s → %s (%s), want %s", c.name, tool, c.args, d.Action, d.Reason, c.want)
			}
		}
	}
}

// Path tools the policy does not know to write only — declared ones, MCP
// tools declared write, an exec-tier upload tool — read what they name too,
// in every mode.
func TestDeclaredPathToolsReadTheirPaths(t *testing.T) {
	p := mustParse(t, `
mode: yolo
tools:
  tiers: { mcp__fs__edit_file: write, acme_edit: write, acme_upload: exec }
  paths: [acme_edit, acme_upload]
rules:
  - { rule: "read_file(*.env)", action: deny }
`)
	for _, tt := range []struct {
		tool, args string
		want       Action
	}{
		{"mcp__fs__edit_file", `{"path":".env","edits":[]}`, Deny},
		{"mcp__fs__edit_file", `{"path":"main.go","edits":[]}`, Allow},
		{"acme_edit", `{"path":".env"}`, Deny},
		{"acme_edit", `{"path":"main.go"}`, Allow},
		{"acme_edit", `{"path":"main.go","command":"rm"}`, Ask},
		{"acme_upload", `{"path":".env"}`, Deny},
		{"acme_upload", `{"file":"app/.env"}`, Deny},
		{"acme_upload", `{"path":"dist/app.tgz"}`, Allow},
	} {
		d := p.Evaluate(Call{Tool: tt.tool, Arguments: json.RawMessage(tt.args), Cwd: "/home/dev/proj"})
		if d.Action != tt.want {
			t.Errorf("%s %s → %s (%s), want %s", tt.tool, tt.args, d.Action, d.Reason, tt.want)
		}
	}
}
