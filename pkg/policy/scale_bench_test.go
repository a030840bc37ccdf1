package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// ruleCounts are the policy sizes of the rules curve (docs/BENCHMARKS.md,
// "Cost as work grows").
var ruleCounts = []int{10, 100, 1000, 10000}

// scalePolicyText writes a policy of n rules shaped like one grown by many
// teams: a fixed head of common rules (git, grep, the secrets every policy
// guards), then rules for many other programs, directories, MCP servers and
// custom tools, nearly none of which can match the benchmark's calls.
func scalePolicyText(n int) string {
	var y strings.Builder
	y.WriteString("mode: auto-edit\nhome: /home/dev\nteams:\n  oncall: { members: [a, b, c] }\nrules:\n")
	count := 0
	add := func(rule, action string) {
		if count < n {
			fmt.Fprintf(&y, "  - { rule: %q, action: %s }\n", rule, action)
			count++
		}
	}
	add("bash(git log *)", "allow")
	add("bash(grep *)", "allow")
	add("bash(head *)", "allow")
	add("bash(sort *)", "allow")
	add("bash(rm -rf *)", "deny")
	add("@files(**/.env)", "deny")
	add("write_file(src/**)", "allow")
	add("read_file(src/**)", "allow")
	add("bash(git push *)", "ask")
	add("mcp__github__*", "ask")
	actions := []string{"allow", "deny", "ask"}
	for i := 0; count < n; i++ {
		a := actions[i%3]
		switch i % 10 {
		case 0, 1, 2:
			add(fmt.Sprintf("bash(prog%d sub%d *)", i, i%7), a)
		case 3:
			add(fmt.Sprintf("read_file(src/pkg%d/**)", i), a)
		case 4:
			add(fmt.Sprintf("write_file(**/gen%d/*.go)", i), a)
		case 5:
			add(fmt.Sprintf("edit(services/svc%d/**)", i), a)
		case 6:
			add(fmt.Sprintf("@files(/srv/data%d/**)", i), a)
		case 7:
			add(fmt.Sprintf("mcp__server%d__*", i), a)
		case 8:
			add(fmt.Sprintf("custom_tool_%d", i), a)
		case 9:
			add(fmt.Sprintf("@shell(tool%d --flag%d *)", i, i%5), a)
		}
	}
	return y.String()
}

func scalePolicy(b *testing.B, n int) *Policy {
	b.Helper()
	p, err := Parse([]byte(scalePolicyText(n)), "scale.yaml")
	if err != nil {
		b.Fatal(err)
	}
	if len(p.static.rules) != n {
		b.Fatalf("%d rules, want %d", len(p.static.rules), n)
	}
	return p
}

// scaleCalls are the typical calls of the rules curve, each with the
// decision every policy size must give.
var scaleCalls = []struct {
	name string
	call Call
	want Action
}{
	{"pipeline", Call{Tool: "bash", Arguments: json.RawMessage(
		`{"command":"git log --oneline -n 20 | grep -n fix src/app/main.go | sort > src/app/fixes.txt"}`)}, Allow},
	{"write_file", Call{Tool: "write_file", Arguments: json.RawMessage(
		`{"path":"src/app/main.go","content":"package main\n"}`)}, Allow},
}

// BenchmarkRulesCurve is the cost of deciding a typical call (a shell
// pipeline that reads a file and writes a redirect, and a file tool) with
// 10 to 10k rules in the policy.
func BenchmarkRulesCurve(b *testing.B) {
	for _, c := range scaleCalls {
		for _, n := range ruleCounts {
			b.Run(fmt.Sprintf("%s/rules=%d", c.name, n), func(b *testing.B) {
				p := scalePolicy(b, n)
				if d := p.Evaluate(c.call); d.Action != c.want {
					b.Fatalf("%s (%s), want %s", d.Action, d.Reason, c.want)
				}
				b.ReportAllocs()
				for b.Loop() {
					p.Evaluate(c.call)
				}
			})
		}
	}
}

// BenchmarkRulesCurveParse is the cost of loading (or reloading) a policy
// of 10 to 10k rules.
func BenchmarkRulesCurveParse(b *testing.B) {
	for _, n := range ruleCounts {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			src := []byte(scalePolicyText(n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(src, "scale.yaml"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
