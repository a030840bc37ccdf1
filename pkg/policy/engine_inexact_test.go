package policy

import (
	"encoding/json"
	"testing"
)

func TestRulesMeetWordsThatAreNotLiteral(t *testing.T) {
	p, err := Parse([]byte(`
mode: yolo
home: /home/dev
rules:
  - { rule: "bash(cat *)", action: allow }
  - { rule: "bash(cat README.md)", action: allow }
  - { rule: "bash(rm *)", action: deny }
  - { rule: "bash(zsh *)", action: allow }
  - { rule: "bash(git push --force*)", action: ask }
  - { rule: "write_file(**/.env)", action: deny }
  - { rule: "read_file(~/.ssh/**)", action: deny }
`), "inexact.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, tool, command string
		want                Action
	}{
		{"an allow rule covers every value of a variable", "bash", `cat "$f"`, Allow},
		{"a trailing star covers an unquoted variable too", "bash", `cat $f`, Allow},
		{"a deny rule meets a variable command name", "bash", `$cmd -rf x`, Deny},
		{"a deny rule meets a pattern command name", "bash", `/bin/r? x`, Deny},
		{"an ask rule meets a variable option", "bash", `git push $F origin`, Ask},
		{"a literal option that cannot match is not asked", "bash", `git push origin`, Allow},
		{"a deny rule meets a pattern redirect target", "bash", `echo x > .e?v`, Deny},
		{"a deny rule meets a variable redirect target", "bash", `echo x > "$F"`, Deny},
		{"a known redirect target elsewhere is allowed", "bash", `echo x > notes.txt`, Allow},
		{"an input redirection is a read", "bash", `cat < ~/.ssh/id_rsa`, Deny},
		{"a read of a pattern that could be a key", "bash", `cat < ~/.ss?/id_rsa`, Deny},
		{"a non-literal -c script could be anything", "bash", `bash -c "$CMD"`, Deny},
		{"a fish -c script asks even in yolo", "bash", `env fish -c 'ls'`, Ask},
		{"a rule naming zsh decides its script", "bash", `zsh -c 'ls'`, Allow},
		{"the zsh tool asks even in yolo", "zsh", `ls`, Ask},
		{"a CR asks even in yolo", "bash", "ls\r", Ask},
		{"arithmetic on an unknown variable asks even in yolo", "bash", "echo $((x))", Ask},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"command": tt.command})
			d := p.Evaluate(Call{Tool: tt.tool, Arguments: args})
			if d.Action != tt.want {
				t.Errorf("%s %q: %s (%s), want %s", tt.tool, tt.command, d.Action, d.Reason, tt.want)
			}
		})
	}
}
