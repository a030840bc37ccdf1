package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/mcpgateway/mcpgatewaytest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// upstreamEnv makes the test binary an upstream MCP server on stdio.
const upstreamEnv = "MCPGW_TEST_UPSTREAM"

func serveTestUpstream() int {
	s := mcpgatewaytest.Upstream(&mcpgatewaytest.Calls{})
	// exit ends this upstream process, as a crashed stdio server would.
	mcp.AddTool(s, &mcp.Tool{Name: "exit", Description: "Exit the server"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	// env reports the SIGNOFF_* settings this upstream was given.
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Signoff settings seen"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		var seen []string
		for _, kv := range os.Environ() {
			if strings.HasPrefix(kv, "SIGNOFF_") {
				seen = append(seen, kv)
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(len(seen))}}}, nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// The gateway as an MCP client runs it: the signoff binary on stdio,
// fronting a stdio upstream (this test binary), against a broker.
func TestGatewayOverStdio(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: `
mode: auto-edit
rules:
  - { tool: mcp__up__echo, action: allow }
  - { tool: mcp__up__touch, action: deny }
  - { tool: mcp__up__exit, action: allow }
  - { tool: mcp__up__env, action: allow }
teams:
  default: { members: [alice, bob] }
`})
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(signoffBin, "mcp-gateway", "--upstream", "up="+self, "--log-level", "warn")
	cmd.Env = hostEnv("SIGNOFF_NATS="+p.URL(), "SIGNOFF_AGENT=pod-1", upstreamEnv+"=1")
	cmd.Stderr = os.Stderr
	ctx := t.Context()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "up__echo") || !strings.Contains(got, "up__touch") {
		t.Fatalf("tools: %s", got)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "over stdio"}})
	if err != nil || res.IsError || textOf(res) != "echo: over stdio" {
		t.Fatalf("allowed call: %v %+v %q", err, res, textOf(res))
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__env", Arguments: map[string]any{}})
	if err != nil || res.IsError || textOf(res) != "0" {
		t.Fatalf("the upstream saw %q SIGNOFF_* settings (%v)", textOf(res), err)
	}

	marker := filepath.Join(t.TempDir(), "marker")
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__touch", Arguments: map[string]any{"path": marker}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "denied by policy") {
		t.Fatalf("denied call: %v %+v %q", err, res, textOf(res))
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the denied call reached the upstream (marker: %v)", err)
	}

	approver := p.Approver("default")
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__deploy", Arguments: map[string]any{}})
		done <- res
	}()
	select {
	case q := <-approver.Asks:
		approver.Approve(q, "alice", messages.ScopeOnce)
	case <-time.After(10 * time.Second):
		t.Fatal("no question")
	}
	if res := <-done; res == nil || res.IsError || textOf(res) != "deployed" {
		t.Fatalf("approved call: %+v", res)
	}

	// The upstream dies during a call: that call fails, the next one
	// starts it again.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__exit", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "upstream MCP server \"up\" failed") {
		t.Fatalf("call that killed the upstream: %v %+v %q", err, res, textOf(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "again"}})
	if err != nil || res.IsError || textOf(res) != "echo: again" {
		t.Fatalf("call after the upstream died: %v %+v %q", err, res, textOf(res))
	}
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// A gateway that cannot ask Signoff exits at start with one line saying
// why, rather than serving calls that each wait and fail.
func TestGatewayStartsOnlyWhenItCanAskSignoff(t *testing.T) {
	noBroker := brokertest.Start(t, brokertest.Options{NoBroker: true})
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, nats, want string
	}{
		{"no NATS server at the URL", "nats://127.0.0.1:1", "signoff mcp-gateway: connect to NATS at nats://127.0.0.1:1: "},
		{"NATS but no broker", noBroker.URL(), "signoff mcp-gateway: no Signoff broker answered on signoff.v1.status."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(signoffBin, "mcp-gateway", "--upstream", "up="+self)
			cmd.Env = hostEnv("SIGNOFF_NATS="+tt.nats, "SIGNOFF_AGENT=pod-1", upstreamEnv+"=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			cmd.Stdin = strings.NewReader("")
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit: %v (stderr %q)", err, stderr.String())
			}
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], tt.want) {
				t.Fatalf("stderr %q, want one line starting %q", stderr.String(), tt.want)
			}
		})
	}
}
