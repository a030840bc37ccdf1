package terminal_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/brokertest"
)

func TestZZReadmeSample(t *testing.T) {
	if os.Getenv("README_SAMPLE") == "" {
		t.Skip()
	}
	p := brokertest.Start(t, brokertest.Options{})
	pending(t, p, p.Agent("demo", "demo-agent"), "default", "FnzSSx1PSQPgBk7t7Zzi4m", "rm -rf build && make build")
	tp, _ := ttyBot(t, p, "teams: [default]\napprovers:\n  alice: {display: Alice}\nterminal: {approver: alice}\n", terminal.Options{})
	tp.out.expect("› ")
	fmt.Println(tp.out.text())
}
