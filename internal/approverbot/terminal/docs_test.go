package terminal_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/policy"
)

var (
	docRequestID = regexp.MustCompile(`(request +)\S+`)
	docDuration  = regexp.MustCompile(`\b(\d+h)?(\d+m)?\d+s\b`)
)

// normalised is a terminal sample without what changes from run to run:
// the request id and the times left.
func normalised(s string) string {
	s = docRequestID.ReplaceAllString(s, "${1}<id>")
	s = docDuration.ReplaceAllString(s, "<t>")
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	return strings.Join(lines, "\n")
}

// docSample is the code block of file that starts with "▶ bash".
func docSample(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "```\n▶ bash")
	if i < 0 {
		t.Fatalf("%s shows no terminal question", file)
	}
	block := text[i+len("```\n"):]
	return block[:strings.Index(block, "```")]
}

// The README and docs/APPROVERS.md show what the terminal prints for the
// demo agent's question under the built-in policy (make run): this test
// prints it and compares.
func TestDocsShowTheTerminalAsItIs(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: string(policy.DefaultYAML()) + "\nteams:\n  default: { members: [alice, bob] }\n"})
	device := p.Approver("default")
	req := brokertest.Ask(context.Background(), p.Agent("demo", "demo-agent"), "req-docs", "bash", brokertest.Bash("rm -rf build && make build"))
	device.NextAsk("req-docs")
	tp, _ := ttyBot(t, p, botConfig("alice", "default"), terminal.Options{})
	tp.out.expect("▶ bash")
	shown := "▶ bash" + tp.out.expect("› ")
	got := normalised(shown)
	for _, file := range []string{"../../../README.md", "../../../docs/APPROVERS.md"} {
		if want := normalised(docSample(t, file)); want != got {
			t.Errorf("%s shows\n%s\n\nthe terminal prints\n%s", file, want, got)
		}
	}
	tp.typeKeys(t, "y")
	req.Wait(t)
}
