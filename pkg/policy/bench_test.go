package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// benchPolicy builds a 200-rule policy shaped like a real one: mostly shell
// rules for many commands (so that the first-word index matters), path
// rules with globs, MCP globs, tool groups and an agent layer.
func benchPolicy(b *testing.B) *Policy {
	b.Helper()
	var y strings.Builder
	y.WriteString("mode: auto-edit\nhome: /home/dev\nteams:\n  oncall: { members: [a, b, c] }\nrules:\n")
	n := 0
	add := func(rule, action string) {
		fmt.Fprintf(&y, "  - { rule: %q, action: %s }\n", rule, action)
		n++
	}
	for _, v := range []string{"status", "diff", "log", "show"} {
		add("bash(git "+v+" *)", "allow")
	}
	for _, v := range []string{"push", "pull", "fetch", "commit", "rebase", "reset"} {
		add("bash(git "+v+" *)", "ask")
	}
	for i := 0; n < 130; i++ {
		add(fmt.Sprintf("bash(tool%d *)", i), []string{"allow", "deny", "ask"}[i%3])
	}
	add("bash(grep *)", "allow")
	add("bash(head *)", "allow")
	add("bash(rm -rf *)", "deny")
	add("@shell(*.env*)", "ask")
	add("@shell(curl *)", "ask")
	for i := 0; n < 170; i++ {
		add(fmt.Sprintf("read_file(src/pkg%d/**)", i), "allow")
		add(fmt.Sprintf("write_file(**/gen%d/*.go)", i), "deny")
	}
	add("@files(*.env)", "deny")
	add("@files(*.env.example)", "allow")
	add("write_file(/etc/**)", "deny")
	for i := 0; n < 190; i++ {
		add(fmt.Sprintf("mcp__server%d__*", i), "ask")
	}
	for i := 0; n < 200; i++ {
		add(fmt.Sprintf("custom_tool_%d", i), "allow")
	}
	y.WriteString("agents:\n  explore:\n    rules:\n      - { rule: \"write_file\", action: deny }\n")
	p, err := Parse([]byte(y.String()), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	if len(p.static.rules) != 200 {
		b.Fatalf("%d rules, want 200", len(p.static.rules))
	}
	return p
}

func benchEvaluate(b *testing.B, c Call, want Action) {
	p := benchPolicy(b)
	if d := p.Evaluate(c); d.Action != want {
		b.Fatalf("%s: %s (%s), want %s", c.Tool, d.Action, d.Reason, want)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.Evaluate(c)
	}
}

// BenchmarkEvaluateToolName is a decision by tool name alone: an MCP tool
// that meets the glob rules and falls to the mode.
func BenchmarkEvaluateToolName(b *testing.B) {
	benchEvaluate(b, Call{Tool: "mcp__github__get_issue", Arguments: json.RawMessage(`{"owner":"o","repo":"r","issue_number":7}`)}, Ask)
}

// BenchmarkEvaluateToolNameRule is a tool-name decision made by a rule.
func BenchmarkEvaluateToolNameRule(b *testing.B) {
	benchEvaluate(b, Call{Tool: "mcp__server3__query"}, Ask)
}

// BenchmarkEvaluatePath is a read_file call: argument scan, path cleaning
// and the path globs of 40-odd rules.
func BenchmarkEvaluatePath(b *testing.B) {
	benchEvaluate(b, Call{Tool: "read_file", Arguments: json.RawMessage(`{"path":"./src/pkg7/sub/file.go"}`)}, Allow)
}

// BenchmarkEvaluatePipeline200Rules is the headline: a 3-command pipeline
// against 200 rules, the same command every time, so its analysis comes
// from the program table's cache (shell_cache.go) after the first.
func BenchmarkEvaluatePipeline200Rules(b *testing.B) {
	benchEvaluate(b, Call{Tool: "bash", Arguments: json.RawMessage(`{"command":"git log --oneline -n 20 | grep fix | head -5"}`)}, Allow)
}

// BenchmarkEvaluatePipeline200RulesUncached is the same pipeline with a
// different number every call, from more distinct commands than the cache
// holds: parse and analysis included, and the cache's misses and
// evictions.
func BenchmarkEvaluatePipeline200RulesUncached(b *testing.B) {
	p := benchPolicy(b)
	calls := make([]Call, 4*shell.CacheEntries)
	for i := range calls {
		calls[i] = Call{Tool: "bash", Arguments: json.RawMessage(fmt.Sprintf(`{"command":"git log --oneline -n %d | grep fix | head -5"}`, i))}
	}
	if d := p.Evaluate(calls[0]); d.Action != Allow {
		b.Fatalf("%s (%s), want allow", d.Action, d.Reason)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p.Evaluate(calls[i%len(calls)])
		i++
	}
}

// BenchmarkEvaluatePipelineRulesOnly is the same decision without the shell
// parse: the rule matching share of BenchmarkEvaluatePipeline200Rules.
func BenchmarkEvaluatePipelineRulesOnly(b *testing.B) {
	p := benchPolicy(b)
	a := shell.Analyze("git log --oneline -n 20 | grep fix | head -5")
	e := evaluation{p: p, tool: "bash", name: "bash", tier: TierExec, kind: kindShell, mode: p.mode}
	subs := make([]subject, len(a.Commands))
	for i := range a.Commands {
		c := &a.Commands[i]
		subs[i] = subject{kind: subjCommand, tier: TierExec, cmd: c, value: strings.Join(c.Words, " ")}
		subs[i].key = commandKey(subs[i].value)
	}
	b.ReportAllocs()
	for b.Loop() {
		for i := range subs {
			if v := e.judge(&subs[i]); v.action != Allow {
				b.Fatal(v.reason)
			}
		}
	}
}

// BenchmarkEvaluatePipelineAnalysisOnly is the shell analysis share of
// BenchmarkEvaluatePipeline200Rules: shell.Analyze of the same command.
func BenchmarkEvaluatePipelineAnalysisOnly(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		shell.Analyze("git log --oneline -n 20 | grep fix | head -5")
	}
}

// BenchmarkParsePolicy200Rules is the cost of a (re)load.
func BenchmarkParsePolicy200Rules(b *testing.B) {
	p := benchPolicy(b)
	_ = p
	var y strings.Builder
	y.WriteString("mode: auto-edit\nrules:\n")
	for i := range 200 {
		fmt.Fprintf(&y, "  - { rule: \"bash(tool%d *)\", action: allow }\n", i)
	}
	src := []byte(y.String())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(src, "bench.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvaluateParallel(b *testing.B) {
	p := benchPolicy(b)
	c := Call{Tool: "bash", Arguments: json.RawMessage(`{"command":"git log --oneline -n 20 | grep fix | head -5"}`)}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p.Evaluate(c)
		}
	})
}

// BenchmarkEvaluatePipelineAgentHome is the headline pipeline from an
// agent whose home is not the broker's, against the same policy without
// home: — a broker in a container: the call is judged by the policy's
// variant for that home (home.go), looked up on every call.
func BenchmarkEvaluatePipelineAgentHome(b *testing.B) {
	p := benchPolicy(b)
	src := strings.Replace(string(p.source), "home: /home/dev\n", "", 1)
	q, err := Parse([]byte(src), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	c := Call{Tool: "bash", Arguments: json.RawMessage(`{"command":"git log --oneline -n 20 | grep fix | head -5"}`), Home: "/home/agent"}
	if d := q.Evaluate(c); d.Action != Allow {
		b.Fatalf("%s (%s), want allow", d.Action, d.Reason)
	}
	b.ReportAllocs()
	for b.Loop() {
		q.Evaluate(c)
	}
}
