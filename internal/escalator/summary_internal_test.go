package escalator

import (
	"encoding/json"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// A page names a shell call's command, and only a shell call's: another
// tool's arguments are named by key, none promoted, since its own schema
// decides what it acts on (red team AG F1: a decoy "command" on an MCP
// tool whose server runs "sql").
func TestAPageNamesACommandOnlyForAShellCall(t *testing.T) {
	q := messages.ApprovalNeeded{Request: messages.Request{Tool: "mcp__postgres__query",
		Arguments: json.RawMessage(`{"command":"SELECT count(*) FROM users","sql":"DROP TABLE users CASCADE"}`)}}
	if got, want := callSummary(q), "mcp__postgres__query (arguments command, sql: see the question)"; got != want {
		t.Errorf("an MCP call's summary %q, want %q", got, want)
	}
	q.Request.Tool, q.Risk.Shell = "bash", true
	if got, want := callSummary(q), "bash SELECT count(*) FROM users"; got != want {
		t.Errorf("a shell call's summary %q, want %q", got, want)
	}
}
