package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCheck(t *testing.T, p *Policy, mode Mode, input string) ([]map[string]any, error) {
	t.Helper()
	var out bytes.Buffer
	err := RunCheck(strings.NewReader(input), &out, p, mode)
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if jerr := json.Unmarshal([]byte(l), &m); jerr != nil {
			t.Fatalf("output line %q is not JSON: %v", l, jerr)
		}
		lines = append(lines, m)
	}
	return lines, err
}

func TestRunCheck(t *testing.T) {
	p := mustParse(t, `
mode: auto-edit
rules:
  - { rule: "bash(ls *)", action: allow }
  - { rule: "bash(rm *)", action: deny }
  - { rule: "bash(kubectl *)", action: ask, route: oncall, ttl: 10m, approvals_required: 2 }
teams:
  oncall: { members: [a, b] }
agents:
  explore:
    rules: [ { rule: "*", action: deny } ]
`)
	input := strings.Join([]string{
		`{"tool":"bash","arguments":{"command":"ls -la && rm -rf x"}}`,
		``,
		`{"tool":"bash","arguments":{"command":"ls"}`, // truncated JSON
		`{"tool":"read_file","arguments":{"path":"a.go"},"agent_type":"explore"}`,
		`{"tool":"bash","argument":{"command":"ls"}}`, // misspelt field
		`{"arguments":{"command":"ls"}}`,              // no tool
		`{"tool":"bash","arguments":"ls"}`,            // arguments not an object
		`   `,
		`{"v":1,"request_id":"r1","session_id":"s","agent_id":"a","tool":"bash","arguments":{"command":"kubectl apply -f x.yaml"},"ttl_ms":5000}`,
		`{"tool":"write_file","arguments":{"path":"out.txt"}}`, // no trailing newline
	}, "\n")
	lines, err := runCheck(t, p, "", input)
	if !errors.Is(err, ErrInvalidLines) {
		t.Errorf("err = %v, want ErrInvalidLines", err)
	}
	type want struct {
		line   float64
		action string
		errSub string
	}
	wants := []want{
		{1, "deny", ""},
		{3, "", "invalid request"},
		{4, "deny", ""},
		{5, "", `unknown field "argument"`},
		{6, "", "missing tool"},
		{7, "", "arguments must be a JSON object"},
		{9, "ask", ""},
		{10, "allow", ""},
	}
	if len(lines) != len(wants) {
		t.Fatalf("%d output lines, want %d: %v", len(lines), len(wants), lines)
	}
	for i, w := range wants {
		got := lines[i]
		if got["line"] != w.line {
			t.Errorf("output %d: line %v, want %v", i, got["line"], w.line)
		}
		if w.errSub != "" {
			if e, _ := got["error"].(string); !strings.Contains(e, w.errSub) {
				t.Errorf("line %v: error %q, want it to mention %q", w.line, e, w.errSub)
			}
			if _, ok := got["action"]; ok {
				t.Errorf("line %v: an error line has an action", w.line)
			}
			continue
		}
		if got["action"] != w.action {
			t.Errorf("line %v: action %v, want %s (%v)", w.line, got["action"], w.action, got["reason"])
		}
	}

	first := lines[0]
	if first["tool"] != "bash" || first["tier"] != "exec" || first["rule"] != "bash(rm *)" || first["layer"] != "static" {
		t.Errorf("line 1 = %v", first)
	}
	subs, _ := first["subcommands"].([]any)
	// ls -la, rm -rf x, and the write of x that rm deletes.
	if len(subs) != 3 || subs[2].(map[string]any)["kind"] != "redirect" || subs[2].(map[string]any)["command"] != "x" {
		t.Fatalf("line 1 subcommands = %v", first["subcommands"])
	}
	sub := subs[1].(map[string]any)
	if sub["command"] != "rm -rf x" || sub["kind"] != "command" || sub["action"] != "deny" || sub["rule"] != "bash(rm *)" || sub["reason"] == "" {
		t.Errorf("subcommand = %v", sub)
	}
	if w, _ := sub["words"].([]any); len(w) != 3 {
		t.Errorf("subcommand words = %v", sub["words"])
	}
	if lines[2]["layer"] != "agent:explore" {
		t.Errorf("agent_type was not honoured: %v", lines[2])
	}
	k := lines[6]
	if k["route"] != "oncall" || k["ttl"] != "10m0s" || k["approvals_required"] != float64(2) || k["grantable"] != true {
		t.Errorf("kubectl line = %v", k)
	}
	if a, _ := k["always"].([]any); len(a) != 1 || a[0] != "kubectl apply -f x.yaml" {
		t.Errorf("always = %v", k["always"])
	}
}

func TestRunCheckModeOverride(t *testing.T) {
	p := mustParse(t, "mode: always-ask\n")
	in := `{"tool":"write_file","arguments":{"path":"x"}}` + "\n"
	lines, err := runCheck(t, p, "", in)
	if err != nil || lines[0]["action"] != "ask" {
		t.Fatalf("policy mode: %v %v", lines, err)
	}
	lines, err = runCheck(t, p, ModeYolo, in)
	if err != nil || lines[0]["action"] != "allow" {
		t.Fatalf("yolo override: %v %v", lines, err)
	}
	if _, err := runCheck(t, p, "sometimes", in); err == nil {
		t.Error("an invalid mode must be an error")
	}
}

func TestRunCheckLongLines(t *testing.T) {
	p := mustParse(t, "mode: auto-edit\n")
	long := `{"tool":"bash","arguments":{"command":"echo ` + strings.Repeat("a", MaxCheckLine) + `"}}`
	fits := `{"tool":"bash","arguments":{"command":"echo ` + strings.Repeat("b", MaxCheckLine-100) + `"}}`
	in := long + "\n" + fits + "\n" + `{"tool":"read_file","arguments":{"path":"x"}}` + "\n"
	lines, err := runCheck(t, p, "", in)
	if !errors.Is(err, ErrInvalidLines) {
		t.Errorf("err = %v", err)
	}
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	if e, _ := lines[0]["error"].(string); !strings.Contains(e, "longer than") {
		t.Errorf("line 1 = %v", lines[0]["error"])
	}
	if lines[1]["line"] != float64(2) || lines[1]["action"] != "ask" {
		t.Errorf("a line under the limit must be judged: %v %v", lines[1]["line"], lines[1]["action"])
	}
	if lines[2]["line"] != float64(3) || lines[2]["action"] != "allow" {
		t.Errorf("the run must go on after a long line: %v", lines[2])
	}
}

func TestRunCheckCleanRun(t *testing.T) {
	p := mustParse(t, "mode: auto-edit\n")
	lines, err := runCheck(t, p, "", "\r\n"+`{"tool":"read_file","arguments":{"path":"x"}}`+"\r\n\n")
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	if len(lines) != 1 || lines[0]["line"] != float64(2) {
		t.Errorf("lines = %v", lines)
	}
	if _, err := runCheck(t, p, "", ""); err != nil {
		t.Errorf("empty input: %v", err)
	}
}

var update = flag.Bool("update", false, "rewrite the golden files of TestCheckExample")

// TestCheckExample keeps the worked example of docs/POLICY.md true: the
// policy, the input lines and the exact output lines live in testdata, and
// the document quotes them.
func TestCheckExample(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "example_policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.ReadFile(filepath.Join("testdata", "example_calls.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = RunCheck(bytes.NewReader(in), &out, p, "")
	if !errors.Is(err, ErrInvalidLines) {
		t.Errorf("err = %v, want ErrInvalidLines (the example ends with a bad line)", err)
	}
	golden := filepath.Join("testdata", "example_check.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("output differs from %s (run go test -run TestCheckExample -update and update docs/POLICY.md):\n%s", golden, out.String())
	}
}

func TestRunCheckCwd(t *testing.T) {
	p := mustParse(t, "mode: auto-edit\n")
	in := `{"tool":"write_file","arguments":{"path":"../../etc/x"},"cwd":"/home/dev/project"}
{"tool":"write_file","arguments":{"path":"src/a.go"},"cwd":"/home/dev/project"}
{"tool":"write_file","arguments":{"path":"a"},"cwd":"relative"}
`
	var out strings.Builder
	err := RunCheck(strings.NewReader(in), &out, p, "")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !errors.Is(err, ErrInvalidLines) {
		t.Fatalf("RunCheck: %v\n%s", err, out.String())
	}
	for i, want := range []string{`"action":"ask"`, `"action":"allow"`, `cwd must be an absolute, clean path`} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d: %s, want %s", i+1, lines[i], want)
		}
	}
}
