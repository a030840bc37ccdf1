package policy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestFileToolsMeetDenyRulesInAnyCaseAndUnderAnyName attacks the file
// tools with the spellings a case-insensitive file system (macOS's and
// Windows' default) opens as the protected file, and with the file tools
// of other agents than the one the rule names (Read for read_file), next
// to ordinary paths that must stay allowed (corpus_policy.yaml, auto-edit
// mode).
func TestFileToolsMeetDenyRulesInAnyCaseAndUnderAnyName(t *testing.T) {
	p := corpusPolicy(t)
	for _, tt := range []struct {
		name, tool, args, cwd string
		want                  policy.Action
	}{
		{"an upper-case .ENV is the .env file", "read_file", `{"path":".ENV"}`, "/home/dev/proj", policy.Deny},
		{"a mixed-case .Env.local too", "read_file", `{"path":".Env.local"}`, "/home/dev/proj", policy.Deny},
		{"an upper-case .SSH directory is ~/.ssh", "read_file", `{"path":"/home/dev/.SSH/id_rsa"}`, "", policy.Deny},
		{"a tilde path with a mixed-case .Ssh too", "read_file", `{"path":"~/.Ssh/config"}`, "", policy.Deny},
		{"a write to /ETC/passwd meets /etc/**", "write_file", `{"path":"/ETC/passwd","content":"x"}`, "", policy.Deny},
		{"a write to ~/.BASHRC meets ~/.bashrc", "write_file", `{"path":"~/.BASHRC","content":"x"}`, "", policy.Deny},
		{"a write to proj/.ENV meets **/.env", "write_file", `{"path":"proj/.ENV","content":"x"}`, "/home/dev", policy.Deny},
		{"Claude Code's Read meets the read_file rule", "Read", `{"file_path":"/home/dev/.ssh/id_rsa"}`, "", policy.Deny},
		{"Write meets the write_file rule", "Write", `{"file_path":"proj/.env","content":"x"}`, "/home/dev", policy.Deny},
		{"Edit meets the write_file rule", "Edit", `{"file_path":"/home/dev/.bashrc","old_string":"a","new_string":"b"}`, "", policy.Deny},
		{"MultiEdit meets the write_file rule", "MultiEdit", `{"file_path":"/home/dev/.ssh/config","edits":[]}`, "", policy.Deny},
		{"Read of an ordinary file stays allowed", "Read", `{"file_path":"src/main.go"}`, "/home/dev/proj", policy.Allow},
		{"Write of an ordinary file stays allowed", "Write", `{"file_path":"src/main.go","content":"x"}`, "/home/dev/proj", policy.Allow},
		{"an upper-case README stays readable", "read_file", `{"path":"README.md"}`, "/home/dev/proj", policy.Allow},
		{"an upper-case file stays writable", "write_file", `{"path":"NOTES.md","content":"x"}`, "/home/dev/proj", policy.Allow},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := p.Evaluate(policy.Call{Tool: tt.tool, Arguments: json.RawMessage(tt.args), Cwd: tt.cwd})
			if d.Action != tt.want {
				t.Errorf("%s %s: got %s (%s: %s), want %s", tt.tool, tt.args, d.Action, d.Layer, d.Reason, tt.want)
			}
		})
	}
}

// TestSafetyOverridesMeetProtectedFilesInAnyCase checks that the critical
// write paths (safety.go) are recognised in any case, by file tools and by
// shell redirections, patterns included.
func TestSafetyOverridesMeetProtectedFilesInAnyCase(t *testing.T) {
	p, err := policy.Parse([]byte("mode: auto-edit\nhome: /home/dev\n"), "redteam.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, tool, args string
		want             string // in SafetyOverride; "" for none
	}{
		{"write_file of /ETC/PASSWD", "write_file", `{"path":"/ETC/PASSWD","content":"x"}`, "/etc/passwd"},
		{"write_file of /etc/Sudoers", "write_file", `{"path":"/etc/Sudoers","content":"x"}`, "/etc/sudoers"},
		{"a redirection to /ETC/shadow", "bash", `{"command":"echo x > /ETC/shadow"}`, "/etc/shadow"},
		{"tee into /Etc/sudoers.d", "bash", `{"command":"echo x | tee /Etc/sudoers.d/x"}`, "sudoers.d"},
		{"a pattern that may be /etc/passwd", "bash", `{"command":"echo x > /ETC/PASS?D"}`, "/etc/passwd"},
		{"an ordinary file in the project", "write_file", `{"path":"Passwd.md","content":"x"}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := p.Evaluate(policy.Call{Tool: tt.tool, Arguments: json.RawMessage(tt.args), Cwd: "/home/dev/proj"})
			switch {
			case tt.want == "" && d.SafetyOverride != "":
				t.Errorf("unexpected safety override %q", d.SafetyOverride)
			case tt.want != "" && !strings.Contains(d.SafetyOverride, tt.want):
				t.Errorf("safety override %q does not name %s (action %s: %s)", d.SafetyOverride, tt.want, d.Action, d.Reason)
			}
		})
	}
}
