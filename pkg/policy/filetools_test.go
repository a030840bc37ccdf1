package policy

import (
	"encoding/json"
	"testing"
)

// The argument shapes of the file tools of real agents, each from the
// tool's documentation: the path must be found whatever its key.
func TestFileToolsOfRealAgents(t *testing.T) {
	p := mustParse(t, `
mode: auto-edit
home: /home/dev
rules:
  - { rule: "@files(**/.ssh/**)", action: deny }
  - { rule: "@files(*.env)", action: deny }
  - { rule: "@write(**/.git/**)", action: ask }
`)
	tests := []struct {
		name, tool, args string
		want             Action
	}{
		// Claude Code
		{"Claude Read file_path", "Read", `{"file_path": "/home/dev/.ssh/id_rsa"}`, Deny},
		{"Claude Write file_path", "Write", `{"file_path": "app/.env", "content": "x"}`, Deny},
		{"Claude Edit file_path", "Edit", `{"file_path": "/home/dev/.ssh/config", "old_string": "a", "new_string": "b"}`, Deny},
		{"Claude MultiEdit file_path", "MultiEdit", `{"file_path": ".env", "edits": [{"old_string": "a", "new_string": "b"}]}`, Deny},
		{"Claude NotebookEdit notebook_path", "NotebookEdit", `{"notebook_path": "/home/dev/.ssh/x.ipynb", "new_source": "x"}`, Deny},
		{"Claude Glob path", "Glob", `{"pattern": "*", "path": "/home/dev/.ssh"}`, Deny},
		{"Claude Grep path", "Grep", `{"pattern": "KEY", "path": "/home/dev/.ssh"}`, Deny},
		{"Claude Grep glob filter", "Grep", `{"pattern": "KEY", "glob": "*.env"}`, Deny},
		{"Claude Grep glob filter over code", "Grep", `{"pattern": "KEY", "glob": "*.go"}`, Allow},
		{"Gemini search_file_content include", "search_file_content", `{"pattern": "KEY", "include": "**/.env"}`, Deny},
		{"Claude LS lists the names in ~/.ssh, a read of the directory", "LS", `{"path": "/home/dev/.ssh"}`, Allow},
		{"Claude LS of a path under ~/.ssh", "LS", `{"path": "/home/dev/.ssh/keys"}`, Deny},
		{"Claude Write in the project is allowed", "Write", `{"file_path": "src/main.go", "content": "x"}`, Allow},
		{"Claude TodoWrite is read-tier", "TodoWrite", `{"todos": []}`, Allow},
		{"Claude ExitPlanMode asks a person", "ExitPlanMode", `{"plan": "x"}`, Ask},
		{"Claude AskUserQuestion asks a person", "AskUserQuestion", `{"questions": []}`, Ask},
		{"Claude WebFetch asks", "WebFetch", `{"url": "https://x", "prompt": "p"}`, Ask},
		{"Claude Task asks", "Task", `{"prompt": "p", "subagent_type": "x"}`, Ask},
		{"Claude Agent asks", "Agent", `{"prompt": "p"}`, Ask},
		// Gemini CLI
		{"Gemini read_file absolute_path", "read_file", `{"absolute_path": "/home/dev/.ssh/id_rsa"}`, Deny},
		{"Gemini write_file file_path", "write_file", `{"file_path": "/home/dev/.ssh/authorized_keys", "content": "k"}`, Deny},
		{"Gemini replace file_path", "replace", `{"file_path": ".env", "old_string": "a", "new_string": "b"}`, Deny},
		{"Gemini read_many_files paths", "read_many_files", `{"paths": ["README.md", "/home/dev/.ssh/id_rsa"]}`, Deny},
		{"Gemini search_file_content path", "search_file_content", `{"pattern": "x", "path": "/home/dev/.ssh"}`, Deny},
		// opencode
		{"opencode read filePath", "read", `{"filePath": "/home/dev/.ssh/id_rsa"}`, Deny},
		{"opencode edit filePath", "edit", `{"filePath": ".env", "oldString": "a", "newString": "b"}`, Deny},
		// Cursor
		{"Cursor read_file target_file", "read_file", `{"target_file": "/home/dev/.ssh/id_rsa"}`, Deny},
		{"Cursor edit_file target_file", "edit_file", `{"target_file": ".env", "code_edit": "x"}`, Deny},
		{"Cursor delete_file target_file", "delete_file", `{"target_file": "/home/dev/.ssh"}`, Deny},
		{"Cursor list_dir relative_workspace_path", "list_dir", `{"relative_workspace_path": "/home/dev/.ssh/keys"}`, Deny},
		// Cline
		{"Cline write_to_file path", "write_to_file", `{"path": ".env", "content": "x"}`, Deny},
		{"Cline replace_in_file path", "replace_in_file", `{"path": ".env", "diff": "x"}`, Deny},
		{"Cline search_files path", "search_files", `{"path": "/home/dev/.ssh", "regex": "x"}`, Deny},
		// Keys in any case or separator style
		{"an upper-case key", "read_file", `{"PATH": "/home/dev/.ssh/id_rsa"}`, Deny},
		{"a kebab-case key", "read_file", `{"file-path": "/home/dev/.ssh/id_rsa"}`, Deny},
		{"a decoy path next to the real one", "write_file", `{"path": "ok.txt", "FilePath": ".env"}`, Deny},
		// Move, copy, rename: both ends
		{"move_file source", "move_file", `{"source": "/home/dev/.ssh/id_rsa", "destination": "x"}`, Deny},
		{"move_file destination", "move_file", `{"source": "x", "destination": ".env"}`, Deny},
		{"rename_file old and new paths", "rename_file", `{"old_path": "a", "new_path": "/home/dev/.ssh/x"}`, Deny},
		{"copy_file src and dst", "copy_file", `{"src": "/home/dev/.ssh/id_rsa", "dst": "/tmp/k"}`, Deny},
		// dir/** covers dir itself for delete, move and rename
		{"delete_file of the directory itself", "delete_file", `{"path": "/home/dev/.ssh"}`, Deny},
		{"delete_file of .git asks", "delete_file", `{"path": ".git"}`, Ask},
		{"rename_file of .git asks", "rename_file", `{"from": ".git", "to": "old-git"}`, Ask},
		{"write_file of a dir-named file is not a tree", "write_file", `{"path": "notes.git"}`, Allow},
		// A path the policy cannot find
		{"a write tool with its path under an unknown key asks", "write_file", `{"location": "/etc/passwd", "content": "x"}`, Ask},
		{"a read tool without a path asks", "Read", `{}`, Ask},
		{"a path that is a number asks", "Read", `{"file_path": 3}`, Ask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := p.Evaluate(Call{Tool: tt.tool, Arguments: json.RawMessage(tt.args), Cwd: "/home/dev/project"})
			if d.Action != tt.want {
				t.Errorf("%s %s → %s (layer %s: %s), want %s", tt.tool, tt.args, d.Action, d.Layer, d.Reason, tt.want)
			}
		})
	}
}

func TestApplyPatch(t *testing.T) {
	p := mustParse(t, `
mode: auto-edit
home: /home/dev
rules:
  - { rule: "@files(**/.ssh/**)", action: deny }
  - { rule: "@write(**/.git/**)", action: ask }
`)
	tests := []struct {
		name, tool, args string
		want             Action
	}{
		{"a Codex envelope inside the project", "apply_patch", `{"input": "*** Begin Patch\n*** Update File: src/a.go\n@@\n-a\n+b\n*** End Patch"}`, Allow},
		{"a Codex envelope adding a key", "apply_patch", `{"input": "*** Begin Patch\n*** Add File: /home/dev/.ssh/authorized_keys\n+ssh-ed25519 AAAA\n*** End Patch"}`, Deny},
		{"a Codex envelope moving onto a key", "apply_patch", `{"input": "*** Begin Patch\n*** Update File: a\n*** Move to: /home/dev/.ssh/config\n*** End Patch"}`, Deny},
		{"a Codex envelope deleting .git", "apply_patch", `{"input": "*** Begin Patch\n*** Delete File: .git\n*** End Patch"}`, Ask},
		{"a unified diff", "apply_patch", `{"patch": "--- a/src/x\n+++ b/.git/hooks/pre-commit\n@@ -1 +1 @@\n-a\n+b\n"}`, Ask},
		{"a git rename", "patch", `{"patchText": "diff --git a/x b/y\nrename from x\nrename to /home/dev/.ssh/y\n"}`, Deny},
		{"a patch that names no file asks", "apply_patch", `{"input": "hello"}`, Ask},
		{"outside the workspace asks", "apply_patch", `{"input": "*** Begin Patch\n*** Add File: /etc/cron.d/x\n+x\n*** End Patch"}`, Ask},
		// git apply makes a link of a mode 120000 file, pointing where its
		// body says: writes through it land there (red team AH L1).
		{"a git diff making a symbolic link asks", "apply_patch", `{"patch": "diff --git a/x b/x\nnew file mode 120000\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+.claude\n\\ No newline at end of file\n"}`, Ask},
		{"a git diff making a plain file is judged by its paths", "apply_patch", `{"patch": "diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+hi\n"}`, Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := p.Evaluate(Call{Tool: tt.tool, Arguments: json.RawMessage(tt.args), Cwd: "/home/dev/project"})
			if d.Action != tt.want {
				t.Errorf("%s → %s (layer %s: %s), want %s", tt.args, d.Action, d.Layer, d.Reason, tt.want)
			}
		})
	}
}

func TestCwdAndWorkspace(t *testing.T) {
	p := mustParse(t, `
mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(echo *)", action: allow }
  - { rule: "bash(cd *)", action: allow }
  - { rule: "bash(cat *)", action: allow }
  - { rule: "shell(echo *)", action: allow }
  - { rule: "write_file(secrets/**)", action: deny }
  - { rule: "read_file(**/.ssh/**)", action: deny }
  - { rule: "read_file(/home/dev/project/keys/**)", action: deny }
`)
	const cwd = "/home/dev/project"
	tests := []struct {
		name, tool, args, cwd string
		want                  Action
	}{
		{"a write in the workspace is allowed", "write_file", `{"path": "src/a.go"}`, cwd, Allow},
		{"an absolute write in the workspace is allowed", "write_file", `{"path": "/home/dev/project/a"}`, cwd, Allow},
		{"edit /etc/hosts asks in auto-edit", "Edit", `{"file_path": "/etc/hosts"}`, cwd, Ask},
		{"write ~/.bashrc asks", "Write", `{"file_path": "~/.bashrc"}`, cwd, Ask},
		{"a relative write climbing out asks", "write_file", `{"path": "../other/x"}`, cwd, Ask},
		{"a redirect climbing out asks", "bash", `{"command": "echo x > ../../etc/x"}`, cwd, Ask},
		{"a redirect in the workspace is allowed", "bash", `{"command": "echo x > out.txt"}`, cwd, Allow},
		{"a relative rule pattern matches under the cwd", "write_file", `{"path": "/home/dev/project/secrets/k"}`, cwd, Deny},
		{"a relative rule pattern matches a relative path", "write_file", `{"path": "secrets/k"}`, cwd, Deny},
		{"a read is resolved against the cwd", "bash", `{"command": "cat .ssh/id_rsa"}`, "/home/dev", Deny},
		{"a script that cd's away asks for its relative writes", "bash", `{"command": "cd /etc && echo x > hosts"}`, cwd, Ask},
		{"a script that cd's into a subdirectory is fine", "bash", `{"command": "cd src && echo x > a.txt"}`, cwd, Allow},
		{"without a cwd, relative writes are the agent's own", "write_file", `{"path": "src/a.go"}`, "", Allow},
		{"without a cwd, absolute writes ask", "write_file", `{"path": "/etc/x"}`, "", Ask},
		{"without a cwd, climbing out asks", "write_file", `{"path": "../x"}`, "", Ask},
		{"a shell tool's workdir moves relative paths", "shell", `{"command": ["bash", "-lc", "echo x > hosts"], "workdir": "/etc"}`, cwd, Ask},
		{"a relative cwd is ignored", "write_file", `{"path": "/etc/x"}`, "relative/dir", Ask},
		// A host honours only its own working-directory key (red team): a
		// look-alike key must not move the judged directory away from
		// where the command may run.
		{"a workdir that moves a read away from a denied directory is judged where the request runs", "bash",
			`{"command": "cat keys/key.pem", "dir": "/tmp"}`, cwd, Deny},
		{"a working-directory key in another spelling is judged where the request runs", "bash",
			`{"command": "cat keys/key.pem", "WorkDir": "../../../tmp"}`, cwd, Deny},
		{"a workdir other than the request's asks", "bash", `{"command": "cat README", "working-directory": "/tmp"}`, cwd, Ask},
		{"a workdir equal to the request's is the same place", "bash", `{"command": "cat README", "workdir": "/home/dev/project"}`, cwd, Allow},
		{"a relative workdir of . is the same place", "bash", `{"command": "cat README", "workdir": "."}`, cwd, Allow},
		{"without a cwd, a workdir moves relative paths", "shell", `{"command": ["bash", "-lc", "echo x > hosts"], "workdir": "/etc"}`, "", Ask},
		// The host's own login-shell wrapper is not the agent's command
		// (red team H): its script is judged, allowed or denied by it.
		{"the host's bash -lc argv is its script", "shell", `{"command": ["bash", "-lc", "echo x > out.txt"]}`, cwd, Allow},
		{"the host's zsh -lc argv is its script", "shell", `{"command": ["/bin/zsh", "-lc", "cat keys/key.pem"]}`, cwd, Deny},
		{"an argv with more words is quoted as one command", "shell", `{"command": ["bash", "-lc", "echo x", "y"]}`, cwd, Ask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := p.Evaluate(Call{Tool: tt.tool, Arguments: json.RawMessage(tt.args), Cwd: tt.cwd})
			if d.Action != tt.want {
				t.Errorf("%s %s (cwd %q) → %s (layer %s: %s), want %s", tt.tool, tt.args, tt.cwd, d.Action, d.Layer, d.Reason, tt.want)
			}
		})
	}
	// The workspace setting replaces the cwd; yolo and always-ask keep
	// their own meaning.
	p2 := mustParse(t, `
mode: auto-edit
home: /home/dev
workspace: [".", /tmp, ~/scratch]
`)
	for path, want := range map[string]Action{
		"/tmp/x": Allow, "/home/dev/scratch/y": Allow, "/home/dev/project/z": Allow, "/etc/x": Ask, "/tmpx": Ask,
	} {
		d := p2.Evaluate(Call{Tool: "write_file", Arguments: json.RawMessage(`{"path": "` + path + `"}`), Cwd: cwd})
		if d.Action != want {
			t.Errorf("workspace [., /tmp, ~/scratch]: write %s → %s (%s), want %s", path, d.Action, d.Reason, want)
		}
	}
	d := p2.Evaluate(Call{Tool: "write_file", Arguments: json.RawMessage(`{"path": "/etc/x"}`), Cwd: cwd, Mode: ModeYolo})
	if d.Action != Allow {
		t.Errorf("yolo: write /etc/x → %s, want allow", d.Action)
	}
	if _, err := Parse([]byte("workspace: [relative/dir]\n"), "p.yaml"); err == nil {
		t.Error("a relative workspace directory loads")
	}
}

func TestWorkspaceWithoutDotAndNoCwd(t *testing.T) {
	p := mustParse(t, "mode: auto-edit\nworkspace: [/srv/project]\n")
	for path, want := range map[string]Action{"src/a.go": Ask, "/srv/project/a": Allow, "/etc/x": Ask} {
		d := p.Evaluate(Call{Tool: "write_file", Arguments: json.RawMessage(`{"path": "` + path + `"}`)})
		if d.Action != want {
			t.Errorf("write %s without a cwd → %s (%s), want %s", path, d.Action, d.Reason, want)
		}
	}
}

// A listing tool reads the directory it lists — the names in it — not the
// files under it: a rule on the directory itself judges it, a rule on
// what is under the directory does not, as for ls DIR in a shell command.
func TestListingIsAReadOfTheDirectory(t *testing.T) {
	p := mustParse(t, `
mode: auto-edit
home: /home/dev
rules:
  - { rule: "@files(**/.ssh/**)", action: deny }
  - { rule: "@files(**/.gnupg)", action: deny }
  - { rule: "bash(ls *)", action: allow }
`)
	for _, tt := range []struct {
		tool, args string
		want       Action
	}{
		{"LS", `{"path": "/home/dev/.ssh"}`, Allow},
		{"list_directory", `{"dir_path": "~/.ssh"}`, Allow},
		{"bash", `{"command": "ls -la ~/.ssh"}`, Allow},
		{"LS", `{"path": "/home/dev/.gnupg"}`, Deny},
		{"list_files", `{"path": "~/.gnupg", "recursive": true}`, Deny},
		{"list_dir", `{"relative_workspace_path": "/home/dev/.ssh/old"}`, Deny},
		{"read_many_files", `{"paths": ["/home/dev/.ssh"]}`, Deny},
	} {
		d := p.Evaluate(Call{Tool: tt.tool, Arguments: json.RawMessage(tt.args)})
		if d.Action != tt.want {
			t.Errorf("%s %s → %s (%s), want %s", tt.tool, tt.args, d.Action, d.Reason, tt.want)
		}
	}
}
