package mcpgatewaytest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Calls counts the calls that reached an upstream's tools.
type Calls struct{ Echo, Touch, Deploy atomic.Int64 }

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type touchArgs struct {
	Path string `json:"path" jsonschema:"the file to create"`
}

// Upstream returns an MCP server with three tools: echo (returns "echo:
// <text>"), touch (creates the file at path, so a test in another process
// can see whether it ran) and deploy (returns "deployed").
func Upstream(calls *Calls) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test-upstream", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		calls.Echo.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "Create a file"}, func(_ context.Context, _ *mcp.CallToolRequest, a touchArgs) (*mcp.CallToolResult, any, error) {
		calls.Touch.Add(1)
		if err := os.WriteFile(a.Path, []byte("touched\n"), 0o600); err != nil {
			return nil, nil, fmt.Errorf("touch: %w", err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "touched " + a.Path}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "deploy", Description: "Deploy"}, func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		calls.Deploy.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deployed"}}}, nil, nil
	})
	return s
}
