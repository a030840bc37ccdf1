package mcpgateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff/internal/agentcfg"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/mcpgateway"
	"github.com/signoff-dev/signoff/internal/mcpgateway/mcpgatewaytest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// newGateway is a gateway fronting the test upstream over HTTP.
func newGateway(t *testing.T, p *brokertest.Plane, up *mcp.Server) *mcpgateway.Gateway {
	t.Helper()
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(upSrv.Close)
	g, err := mcpgateway.New(t.Context(), mcpgateway.Config{
		Upstreams: []mcpgateway.Upstream{{Name: "up", URL: upSrv.URL}},
		Agent:     agentcfg.Config{NATSURL: p.URL(), Agent: "pod-1", Prefix: messages.DefaultPrefix, AttemptTimeout: time.Second, ReceiptTimeout: 5 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

const (
	rawInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	rawInitalized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	rawDeploy     = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"up__deploy","arguments":{}}}`
	rawCancel     = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user pressed Esc"}}`
	rawPing       = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
)

// responseID is the id of a JSON-RPC response, or "" for other messages.
func responseID(t *testing.T, line string) string {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("gateway wrote %q: %v", line, err)
	}
	if m.Method != "" {
		return ""
	}
	return string(m.ID)
}

// MCP: "Receivers of a cancellation notification SHOULD NOT send a
// response for the cancelled request." The question is withdrawn too.
func TestGatewaySendsNoResponseToACancelledCall(t *testing.T) {
	t.Run("over stdio", func(t *testing.T) {
		p := brokertest.Start(t, brokertest.Options{Policy: gatewayPolicy})
		g := newGateway(t, p, mcpgatewaytest.Upstream(&mcpgatewaytest.Calls{}))
		approver := p.Approver("default")
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		go func() {
			_ = g.ServeStdio(context.WithoutCancel(t.Context()), &mcp.IOTransport{Reader: inR, Writer: outW})
		}()
		t.Cleanup(func() { _ = inW.Close(); _ = outR.Close() })
		lines := make(chan string, 16)
		go func() {
			sc := bufio.NewScanner(outR)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		send := func(s string) {
			t.Helper()
			if _, err := io.WriteString(inW, s+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		// next returns the next response, failing on one to id 2.
		next := func() string {
			t.Helper()
			for {
				select {
				case line, ok := <-lines:
					if !ok {
						t.Fatal("the gateway closed stdout")
					}
					id := responseID(t, line)
					if id == "2" {
						t.Fatalf("the cancelled call got a response: %s", line)
					}
					if id != "" {
						return id
					}
				case <-time.After(10 * time.Second):
					t.Fatal("no response")
				}
			}
		}
		send(rawInitialize)
		if id := next(); id != "1" {
			t.Fatalf("response to %s", id)
		}
		send(rawInitalized)
		send(rawDeploy)
		q := <-approver.Asks
		send(rawCancel)
		waitState(t, p, q, messages.StateCancelled)
		time.Sleep(300 * time.Millisecond) // time for an answer, were one sent
		send(rawPing)
		if id := next(); id != "3" {
			t.Fatalf("response to %s", id)
		}
	})

	t.Run("over streamable HTTP with sessions", func(t *testing.T) {
		p := brokertest.Start(t, brokertest.Options{Policy: gatewayPolicy})
		g := newGateway(t, p, mcpgatewaytest.Upstream(&mcpgatewaytest.Calls{}))
		srv := httptest.NewServer(g.Handler())
		t.Cleanup(srv.Close)
		approver := p.Approver("default")
		session := ""
		post := func(ctx context.Context, body string) (*http.Response, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			}
			return http.DefaultClient.Do(req)
		}
		res, err := post(t.Context(), rawInitialize)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		session = res.Header.Get("Mcp-Session-Id")
		if res.StatusCode != http.StatusOK || session == "" {
			t.Fatalf("initialize: %s, session %q", res.Status, session)
		}
		if res, err = post(t.Context(), rawInitalized); err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()

		body := make(chan string, 1)
		go func() {
			res, err := post(t.Context(), rawDeploy)
			if err != nil {
				body <- "error: " + err.Error()
				return
			}
			data, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			body <- string(data)
		}()
		q := <-approver.Asks
		if res, err = post(t.Context(), rawCancel); err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		waitState(t, p, q, messages.StateCancelled)
		select {
		case b := <-body:
			if strings.Contains(b, `"id":2`) || strings.HasPrefix(b, "error: ") {
				t.Fatalf("the cancelled call's stream carried %q", b)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the cancelled call's stream did not end")
		}
	})
}

// Rules name a tool as its server spells it, though clients see a name
// cleaned up for MCP (a '/' is not allowed there).
func TestGatewayRulesNameToolsAsTheirServerSpellsThem(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: `
mode: auto-edit
rules:
  - { tool: "mcp__up__repo/read", action: allow }
  - { tool: "mcp__up__repo/delete", action: deny }
teams:
  default: { members: [alice] }
`})
	up := mcp.NewServer(&mcp.Implementation{Name: "slashes", Version: "1"}, nil)
	for _, name := range []string{"repo/read", "repo/delete"} {
		up.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + name}}}, nil
		})
	}
	g := newGateway(t, p, up)
	clientT, serverT := mcp.NewInMemoryTransports()
	go func() { _ = g.ServeStdio(context.WithoutCancel(t.Context()), serverT) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{} // upstream name → listed name
	for _, tool := range tools.Tools {
		listed[tool.Title] = tool.Name
	}
	if len(listed) != 2 || strings.Contains(listed["repo/read"], "/") || listed["repo/read"] == "" {
		t.Fatalf("listed %v", listed)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: listed["repo/read"]})
	if err != nil || res.IsError || text(t, res) != "ran repo/read" {
		t.Fatalf("repo/read: %v %q", err, text(t, res))
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: listed["repo/delete"]})
	if err != nil || !res.IsError || !strings.Contains(text(t, res), "Tool 'mcp__up__repo/delete' was denied by policy") {
		t.Fatalf("repo/delete: %v %q", err, text(t, res))
	}
}
