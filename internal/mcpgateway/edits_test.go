package mcpgateway_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/mcpgateway"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// askEchoPolicy asks about every call of echo.
const askEchoPolicy = `
mode: auto-edit
rules:
  - { tool: mcp__up__echo, action: ask }
teams:
  default: { members: [alice, bob] }
`

// callEcho calls up__echo with text and returns where its result will
// come and the question the approver got.
func callEcho(t *testing.T, cs *mcp.ClientSession, approver *brokertest.Approver, text string) (<-chan *mcp.CallToolResult, messages.ApprovalNeeded) {
	t.Helper()
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": text}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case q := <-approver.Asks:
		return done, q
	case <-time.After(10 * time.Second):
		t.Fatal("no question reached the approver")
	}
	return nil, messages.ApprovalNeeded{}
}

func TestGatewayForwardsTheArgumentsTheApproverChanged(t *testing.T) {
	p, calls, cs := httpSetupWith(t, askEchoPolicy)
	approver := p.Approver("default")
	done, q := callEcho(t, cs, approver, "drop table users")
	rep := approver.Respond(messages.Response{RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
		Approver: messages.Approver{ID: "alice"}, Approved: true, UpdatedArguments: json.RawMessage(`{"text":"select 1"}`), Digest: q.Digest})
	if !rep.Applied {
		t.Fatalf("reply %+v", rep)
	}
	res := <-done
	if res == nil || res.IsError || len(res.Content) != 2 {
		t.Fatalf("result %+v", res)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "echo: select 1" {
		t.Fatalf("the upstream did not run the approved version: %q", got)
	}
	// The client learns that its call was changed, and how.
	note := res.Content[1].(*mcp.TextContent).Text
	if !strings.Contains(note, "alice approved this call with changes") || !strings.Contains(note, `{"text":"select 1"}`) {
		t.Fatalf("note %q", note)
	}
	ran, _ := json.Marshal(res.Meta[mcpgateway.MetaArgumentsRun])
	if string(ran) != `{"text":"select 1"}` {
		t.Fatalf("_meta %s = %s", mcpgateway.MetaArgumentsRun, ran)
	}
	if calls.Echo.Load() != 1 {
		t.Fatalf("upstream saw %d calls", calls.Echo.Load())
	}
}

// askEchoAnswerPolicy declares echo an ask-user tool: a person's answer is
// its result.
const askEchoAnswerPolicy = `
mode: auto-edit
tools:
  answer: [mcp__up__echo]
rules:
  - { tool: mcp__up__echo, action: ask }
teams:
  default: { members: [alice, bob] }
`

// An ask-user tool a person answered does not run: the answer is its
// result (red team AT F6: the gateway forwarded every allow, so the
// upstream ran and the model read the tool's own text, never the "no").
func TestGatewayReturnsAPersonsAnswerInsteadOfRunningTheTool(t *testing.T) {
	p, calls, cs := httpSetupWith(t, askEchoAnswerPolicy)
	approver := p.Approver("default")
	done, q := callEcho(t, cs, approver, "Shall I rotate the production password now?")
	rep := approver.Respond(messages.Response{RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
		Approver: messages.Approver{ID: "alice"}, Approved: true, Answer: json.RawMessage(`"NO. Wait for the change window."`), Digest: q.Digest})
	if !rep.Applied {
		t.Fatalf("reply %+v", rep)
	}
	res := <-done
	if res == nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("result %+v", res)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "The user answered through Signoff (the tool was not run; this is its result): NO. Wait for the change window." {
		t.Errorf("the model reads %q", got)
	}
	if n := calls.Echo.Load(); n != 0 {
		t.Errorf("the upstream ran the answered tool %d times", n)
	}
}
