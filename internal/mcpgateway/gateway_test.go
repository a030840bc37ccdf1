package mcpgateway_test

import (
	"context"
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

// gatewayPolicy allows echo, denies touch and asks about everything else
// (the mcp tier asks in auto-edit mode).
const gatewayPolicy = `
mode: auto-edit
rules:
  - { tool: mcp__up__echo, action: allow }
  - { tool: mcp__up__touch, action: deny }
teams:
  default: { members: [alice, bob] }
`

// httpSetup runs an upstream over streamable HTTP, a gateway fronting it,
// served over streamable HTTP, and a real MCP client connected to it.
func httpSetup(t *testing.T) (*brokertest.Plane, *mcpgatewaytest.Calls, *mcp.ClientSession) {
	t.Helper()
	return httpSetupWith(t, gatewayPolicy)
}

// httpSetupWith is httpSetup with the policy pol.
func httpSetupWith(t *testing.T, pol string) (*brokertest.Plane, *mcpgatewaytest.Calls, *mcp.ClientSession) {
	t.Helper()
	p := brokertest.Start(t, brokertest.Options{Policy: pol})
	calls := &mcpgatewaytest.Calls{}
	up := mcpgatewaytest.Upstream(calls)
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(upSrv.Close)

	g, err := mcpgateway.New(t.Context(), mcpgateway.Config{
		Upstreams: []mcpgateway.Upstream{{Name: "up", URL: upSrv.URL}},
		Agent:     agentcfg.Config{NATSURL: p.URL(), Agent: "pod-1", Prefix: messages.DefaultPrefix, AttemptTimeout: time.Second, ReceiptTimeout: 5 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	gwSrv := httptest.NewServer(g.Handler())
	t.Cleanup(func() { gwSrv.Close(); g.Close() })

	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: gwSrv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return p, calls, cs
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestGatewayOverHTTP(t *testing.T) {
	p, calls, cs := httpSetup(t)
	ctx := t.Context()

	t.Run("the upstream's tools are listed under prefixed names", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, tool := range res.Tools {
			names[tool.Name] = true
		}
		for _, want := range []string{"up__echo", "up__touch", "up__deploy"} {
			if !names[want] {
				t.Fatalf("tools %v lack %s", names, want)
			}
		}
	})

	t.Run("an allowed call is forwarded and returns the upstream's result", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || text(t, res) != "echo: hi" {
			t.Fatalf("result %+v %q", res, text(t, res))
		}
		if calls.Echo.Load() != 1 {
			t.Fatalf("upstream saw %d echo calls", calls.Echo.Load())
		}
	})

	t.Run("a denied call is a tool error with the reason and never reaches the upstream", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__touch", Arguments: map[string]any{"path": t.TempDir() + "/x"}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(text(t, res), "Tool 'mcp__up__touch' was denied by policy") {
			t.Fatalf("result %+v %q", res, text(t, res))
		}
		if calls.Touch.Load() != 0 {
			t.Fatal("the denied call reached the upstream")
		}
	})

	t.Run("an asked call approved on a device is forwarded", func(t *testing.T) {
		approver := p.Approver("default")
		type out struct {
			res *mcp.CallToolResult
			err error
		}
		done := make(chan out, 1)
		go func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__deploy", Arguments: map[string]any{}})
			done <- out{res, err}
		}()
		var q messages.ApprovalNeeded
		select {
		case q = <-approver.Asks:
		case <-time.After(10 * time.Second):
			t.Fatal("no question reached the approver")
		}
		if q.Request.Tool != "mcp__up__deploy" {
			t.Fatalf("question about %q", q.Request.Tool)
		}
		if calls.Deploy.Load() != 0 {
			t.Fatal("the call reached the upstream before it was approved")
		}
		approver.Approve(q, "alice", messages.ScopeOnce)
		o := <-done
		if o.err != nil || o.res.IsError || text(t, o.res) != "deployed" {
			t.Fatalf("after approval: %v %+v", o.err, o.res)
		}
	})

	t.Run("an asked call rejected on a device returns the approver's feedback", func(t *testing.T) {
		approver := p.Approver("default")
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__deploy", Arguments: map[string]any{}})
			done <- res
		}()
		q := <-approver.Asks
		approver.Reject(q, "bob", messages.RejectSoft, "not on a Friday")
		res := <-done
		if res == nil || !res.IsError || !strings.Contains(text(t, res), "not on a Friday") {
			t.Fatalf("result %+v", res)
		}
		if calls.Deploy.Load() != 1 {
			t.Fatalf("upstream saw %d deploys, want the approved one only", calls.Deploy.Load())
		}
	})
}

func TestGatewayWithdrawsTheQuestionWhenTheClientGivesUp(t *testing.T) {
	p, calls, cs := httpSetup(t)
	approver := p.Approver("default")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__deploy", Arguments: map[string]any{}})
		done <- err
	}()
	var q messages.ApprovalNeeded
	select {
	case q = <-approver.Asks:
	case <-time.After(10 * time.Second):
		t.Fatal("no question")
	}
	cancel()
	<-done
	agent := p.Agent(q.Request.SessionID, "pod-1")
	deadline := time.Now().Add(5 * time.Second)
	for {
		rc, err := agent.Status(t.Context(), q.Request.RequestID)
		if err == nil && rc.State == messages.StateCancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("request still %s (%v) after the client cancelled", rc.State, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if calls.Deploy.Load() != 0 {
		t.Fatal("a call the client gave up on reached the upstream")
	}
}

func TestGatewayDeniesWhenSignoffIsAway(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: gatewayPolicy, NoBroker: true})
	calls := &mcpgatewaytest.Calls{}
	up := mcpgatewaytest.Upstream(calls)
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(upSrv.Close)
	cfg := mcpgateway.Config{
		Upstreams: []mcpgateway.Upstream{{Name: "up", URL: upSrv.URL}},
		Agent:     agentcfg.Config{NATSURL: p.URL(), Agent: "pod-1", Prefix: messages.DefaultPrefix, AttemptTimeout: 200 * time.Millisecond, ReceiptTimeout: time.Second},
	}

	t.Run("with no broker the gateway does not start, and says why", func(t *testing.T) {
		_, err := mcpgateway.New(t.Context(), cfg)
		if err == nil || !strings.Contains(err.Error(), "no Signoff broker answered on signoff.v1.status.") {
			t.Fatalf("New without a broker: %v", err)
		}
	})
	t.Run("with no NATS the gateway does not start, and says why", func(t *testing.T) {
		c := cfg
		c.Agent.NATSURL = "nats://127.0.0.1:1"
		_, err := mcpgateway.New(t.Context(), c)
		if err == nil || !strings.Contains(err.Error(), "connect to NATS at nats://127.0.0.1:1") {
			t.Fatalf("New without NATS: %v", err)
		}
	})

	t.Run("a broker gone after the start is a refusal, not a forwarded call", func(t *testing.T) {
		replica := p.StartReplica("late")
		g, err := mcpgateway.New(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(g.Close)
		replica.Kill()
		clientT, serverT := mcp.NewInMemoryTransports()
		go func() { _ = g.ServeStdio(context.WithoutCancel(t.Context()), serverT) }()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), clientT, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(text(t, res), "Signoff could not decide") || calls.Echo.Load() != 0 {
			t.Fatalf("with no broker: %+v %q, upstream calls %d", res, text(t, res), calls.Echo.Load())
		}
	})
}

type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(r)
}

func TestGatewayHTTPRequiresItsBearerToken(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: gatewayPolicy})
	up := mcpgatewaytest.Upstream(&mcpgatewaytest.Calls{})
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(upSrv.Close)
	g, err := mcpgateway.New(t.Context(), mcpgateway.Config{
		Upstreams:   []mcpgateway.Upstream{{Name: "up", URL: upSrv.URL}},
		Agent:       agentcfg.Config{NATSURL: p.URL(), Agent: "pod-1", Prefix: messages.DefaultPrefix, AttemptTimeout: time.Second, ReceiptTimeout: time.Second},
		BearerToken: "s3cret",
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(func() { srv.Close(); g.Close() })

	res, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: %s", res.Status)
	}
	for _, token := range []string{"wrong", "s3cret"} {
		hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, MaxRetries: -1}, nil)
		if token == "wrong" {
			if err == nil {
				_ = cs.Close()
				t.Fatal("a wrong token connected")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		_ = cs.Close()
	}
}

func TestGatewayFollowsTheUpstreamsToolList(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: gatewayPolicy})
	up := mcpgatewaytest.Upstream(&mcpgatewaytest.Calls{})
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(upSrv.Close)
	g, err := mcpgateway.New(t.Context(), mcpgateway.Config{
		Upstreams: []mcpgateway.Upstream{{Name: "up", URL: upSrv.URL}},
		Agent:     agentcfg.Config{NATSURL: p.URL(), Agent: "pod-1", Prefix: messages.DefaultPrefix, AttemptTimeout: time.Second, ReceiptTimeout: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	clientT, serverT := mcp.NewInMemoryTransports()
	go func() { _ = g.ServeStdio(context.WithoutCancel(t.Context()), serverT) }()
	changed := make(chan struct{}, 10)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(t.Context(), clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })

	waitFor := func(what string, ok func(map[string]bool) bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			res, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]bool{}
			for _, tool := range res.Tools {
				names[tool.Name] = true
			}
			if ok(names) {
				return
			}
			select {
			case <-changed:
			case <-time.After(100 * time.Millisecond):
			case <-deadline:
				t.Fatalf("%s: tools %v", what, names)
			}
		}
	}
	mcp.AddTool(up, &mcp.Tool{Name: "status", Description: "Status"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "green"}}}, nil, nil
	})
	waitFor("a tool added upstream is listed", func(n map[string]bool) bool { return n["up__status"] })
	up.RemoveTools("touch")
	waitFor("a tool removed upstream is gone", func(n map[string]bool) bool { return !n["up__touch"] && n["up__echo"] })
}
