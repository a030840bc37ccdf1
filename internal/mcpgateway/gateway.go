package mcpgateway

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/signoff-dev/signoff/internal/agentcfg"
	"github.com/signoff-dev/signoff/internal/buildinfo"
	"github.com/signoff-dev/signoff/internal/natsurl"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Gateway is an MCP server whose tools are those of its upstreams, each
// call gated by Signoff. Create it with [New]; it is safe for concurrent
// use.
type Gateway struct {
	cfg     Config
	log     *slog.Logger
	nc      *nats.Conn
	server  *mcp.Server
	session string // the Signoff session of stdio clients

	wg        sync.WaitGroup // the upstream sessions' watchers
	mu        sync.Mutex
	upstreams []*upstream
	exposed   map[string]*upstream // exposed tool name → its upstream
}

// New connects to NATS, checks that a Signoff broker answers, connects to
// every upstream, lists their tools and returns the gateway. A gateway that
// cannot ask Signoff could serve nothing but refusals, so that is an error
// at start; NATS or broker outages after it are ridden out (calls made
// meanwhile are refused, not forwarded). An upstream that cannot be reached or listed is an
// error: a gateway that silently serves fewer tools than configured would
// confuse its users.
func New(ctx context.Context, cfg Config) (*Gateway, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	nc, err := cfg.Connect(ctx, "signoff-mcp-gateway")
	if err != nil {
		return nil, err
	}
	g := &Gateway{cfg: cfg, log: cfg.Logger, nc: nc, session: cfg.Session, exposed: map[string]*upstream{}}
	if g.session == "" {
		g.session = "mcp-" + nuid.Next()
	}
	if err := g.checkBroker(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	g.server = mcp.NewServer(&mcp.Implementation{Name: "signoff-mcp-gateway", Version: cfg.Version},
		&mcp.ServerOptions{Logger: cfg.Logger, Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	for _, u := range cfg.Upstreams {
		up := &upstream{g: g, cfg: u}
		g.upstreams = append(g.upstreams, up)
		if err := up.connect(ctx); err != nil {
			g.Close()
			return nil, err
		}
		if err := g.refresh(ctx, up); err != nil {
			g.Close()
			return nil, err
		}
	}
	return g, nil
}

// brokerCheckTimeout bounds the start-up check of the broker.
const brokerCheckTimeout = 5 * time.Second

// checkBroker asks a broker for the status of a request that does not
// exist: any reply, an error reply included, is a broker that answers on
// the gateway's prefix.
func (g *Gateway) checkBroker(ctx context.Context) error {
	prefix := g.cfg.Agent.Prefix
	if prefix == "" {
		prefix = messages.DefaultPrefix
	}
	subj, err := messages.NewSubjects(prefix)
	if err != nil {
		return err
	}
	data, err := json.Marshal(messages.StatusRequest{V: messages.Version, RequestID: "startup-check-" + nuid.Next()})
	if err != nil {
		return err
	}
	subject := subj.Status(g.session)
	cctx, cancel := context.WithTimeout(ctx, brokerCheckTimeout)
	defer cancel()
	for {
		_, err := g.nc.RequestWithContext(cctx, subject, data)
		switch {
		case err == nil:
			return nil
		case cctx.Err() != nil && ctx.Err() == nil:
			return fmt.Errorf("no Signoff broker answered on %s at %s within %s: start one (broker --dev to try it) or check --prefix",
				subject, natsurl.Redact(g.cfg.Agent.NATSURL), brokerCheckTimeout)
		case !errors.Is(err, nats.ErrNoResponders):
			return fmt.Errorf("checking for a Signoff broker on %s at %s: %w", subject, natsurl.Redact(g.cfg.Agent.NATSURL), err)
		}
		// No responders can be a broker still subscribing: ask again.
		select {
		case <-cctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ServeStdio serves one MCP client on t (stdin/stdout: &mcp.StdioTransport{})
// until the client disconnects or ctx ends.
func (g *Gateway) ServeStdio(ctx context.Context, t mcp.Transport) error {
	return g.server.Run(ctx, cancelTransport{t})
}

// Handler serves MCP clients over streamable HTTP; each MCP session is its
// own Signoff session unless Config.Session fixes one.
//
// Requests of protocol 2026-07-28 and later (an Mcp-Protocol-Version header
// of at least that) are served statelessly, as that protocol has no
// sessions and the SDK serves it over HTTP only so: their calls share the
// gateway's Signoff session (Config.Session, or one made at start), and a
// client cancels a call by closing its request. Earlier protocols get
// stateful sessions.
//
// Browsers' cross-origin requests are refused, and the SDK's DNS-rebinding
// protection applies on loopback addresses. With Config.BearerToken set,
// every request must carry "Authorization: Bearer <token>".
func (g *Gateway) Handler() http.Handler {
	server := func(*http.Request) *mcp.Server { return g.server }
	stateful := (&httpCancels{}).wrap(mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{
		Logger:                g.log,
		CrossOriginProtection: http.NewCrossOriginProtection(),
	}))
	stateless := mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{
		Logger:                       g.log,
		CrossOriginProtection:        http.NewCrossOriginProtection(),
		Stateless:                    true,
		PropagateRequestCancellation: true,
	})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= statelessProtocol {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
	if g.cfg.BearerToken == "" {
		return h
	}
	want := []byte("Bearer " + g.cfg.BearerToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="signoff-mcp-gateway"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// statelessProtocol is the first MCP protocol version without sessions
// (dates compare as strings).
const statelessProtocol = "2026-07-28"

// Close closes the upstream sessions (stopping stdio upstreams) and the
// NATS connection. It is idempotent.
func (g *Gateway) Close() {
	g.mu.Lock()
	ups := g.upstreams
	g.mu.Unlock()
	for _, up := range ups {
		up.close()
	}
	g.wg.Wait()
	g.nc.Close()
}

// refresh lists up's tools and makes the server's list match: new tools
// are added, gone ones removed. The SDK tells connected clients that the
// list changed.
func (g *Gateway) refresh(ctx context.Context, up *upstream) error {
	up.refreshing.Lock()
	defer up.refreshing.Unlock()
	cs, err := up.session(ctx)
	if err != nil {
		return err
	}
	var tools []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("upstream %s: list tools: %w", up.cfg.Name, err)
		}
		tools = append(tools, t)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	keep := map[string]bool{}
	for _, t := range tools {
		name := exposedName(up.cfg.Name, t.Name)
		if other, taken := g.exposed[name]; taken && other != up || keep[name] {
			g.log.Error("MCP tool name collision; tool not served", "upstream", up.cfg.Name, "tool", t.Name, "name", name)
			continue
		}
		if err := g.addTool(g.toolFor(name, t), g.handler(up, name, t.Name, policyTool(up.cfg.Name, t.Name, name))); err != nil {
			g.log.Error("upstream tool refused; not served", "upstream", up.cfg.Name, "tool", t.Name, "err", err)
			continue
		}
		keep[name] = true
		g.exposed[name] = up
	}
	var gone []string
	for name, owner := range g.exposed {
		if owner == up && !keep[name] {
			gone = append(gone, name)
			delete(g.exposed, name)
		}
	}
	if len(gone) > 0 {
		g.server.RemoveTools(gone...)
	}
	g.log.Info("upstream tools listed", "upstream", up.cfg.Name, "tools", len(keep), "removed", len(gone))
	return nil
}

// addTool adds t, turning the SDK's panic on a tool it cannot serve (an
// upstream's malformed schema or annotations) into an error: one bad tool
// must not take the gateway down.
func (g *Gateway) addTool(t *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	g.server.AddTool(t, h)
	return nil
}

// toolFor is the tool as the gateway lists it.
func (g *Gateway) toolFor(name string, t *mcp.Tool) *mcp.Tool {
	out := *t
	out.Name = name
	out.Meta = nil
	out.InputSchema = objectSchema(t.InputSchema)
	if out.Title == "" {
		out.Title = t.Name
	}
	return &out
}

// objectSchema returns s when it is a JSON Schema of type object (which the
// SDK requires of a tool's input schema), else the schema of any object.
func objectSchema(s any) any {
	var m map[string]any
	data, err := json.Marshal(s)
	if err == nil && json.Unmarshal(data, &m) == nil && m["type"] == "object" {
		return m
	}
	return map[string]any{"type": "object"}
}

// handler gates one tool: name is the name clients call, tool
// the upstream's, signoffTool the name Signoff judges.
func (g *Gateway) handler(up *upstream, name, tool, signoffTool string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := bytes.TrimSpace(req.Params.Arguments)
		if len(args) == 0 || bytes.Equal(args, []byte("null")) {
			args = []byte("{}")
		}
		if args[0] != '{' {
			return toolError("Tool '%s' was not run: its arguments must be a JSON object.", name), nil
		}
		session := g.sessionOf(req.Session)
		log := g.log.With("session_id", session, "tool", signoffTool)
		d, err := g.decide(ctx, session, signoffTool, args, up, tool)
		if err != nil {
			log.Warn("no decision; call not forwarded", "err", err)
			return toolError("Tool '%s' was not run: Signoff could not decide (%v).", name, err), nil
		}
		log = log.With("request_id", d.RequestID)
		if d.Outcome != messages.OutcomeAllow {
			log.Info("call denied", "reason_code", d.ReasonCode)
			text := d.LLMMessage
			if text == "" {
				text = fmt.Sprintf("Tool '%s' was not run: Signoff denied it (%s).", name, d.Reason)
			}
			return toolError("%s", text), nil
		}
		if text, ok := client.Answered(d); ok {
			// A person answered an ask-user tool: the answer is the
			// call's result; the upstream tool does not run.
			log.Info("call answered by a person; not forwarded", "decided_by", d.DecidedBy.ID)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}
		edited := d.Edited()
		if edited {
			// Approved with changes: the upstream runs the approver's
			// version of the call, never the client's.
			log.Info("call approved with changes", "decided_by", d.DecidedBy.ID)
			args = d.UpdatedArguments
		}
		cctx, cancel := context.WithTimeout(ctx, g.cfg.CallTimeout)
		defer cancel()
		res, err := up.call(cctx, tool, json.RawMessage(args))
		if err != nil {
			log.Warn("upstream call failed", "upstream", up.cfg.Name, "err", err)
			return toolError("Tool '%s' was allowed, but the upstream MCP server %q failed: %v", name, up.cfg.Name, err), nil
		}
		res.Meta = withoutProtocolMeta(res.Meta)
		if edited {
			noteEdited(res, d, args)
		}
		return res, nil
	}
}

// decide asks Signoff about one call and waits for the decision, at most
// DecisionTimeout; a request still pending then is cancelled.
func (g *Gateway) decide(ctx context.Context, session, tool string, args []byte, up *upstream, orig string) (*messages.Decision, error) {
	server := up.cfg.Name
	c, err := client.New(g.nc, append(g.cfg.Agent.ClientOptions(session, ""), client.WithGate(messages.GateMCP, buildinfo.Version()))...)
	if err != nil {
		return nil, err
	}
	call := client.Call{
		RequestID:   nuid.Next(),
		Tool:        tool,
		Category:    messages.CategoryMCP,
		Arguments:   json.RawMessage(args),
		Description: fmt.Sprintf("MCP tool %.200q of server %q", orig, server),
		TTL:         g.cfg.DecisionTimeout,
		Home:        up.home(),
	}
	wctx, cancel := context.WithTimeout(ctx, g.cfg.DecisionTimeout)
	defer cancel()
	d, err := c.Request(wctx, call)
	if err != nil && wctx.Err() != nil {
		// The client went away or the wait is over: withdraw the question.
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		_, _ = c.Cancel(cctx, call.RequestID)
		ccancel()
	}
	if err != nil {
		return nil, err
	}
	if d.Outcome != messages.OutcomeAllow && d.Outcome != messages.OutcomeDeny {
		return nil, fmt.Errorf("decision with outcome %q", d.Outcome)
	}
	return d, nil
}

// sessionOf is the Signoff session of an MCP session.
func (g *Gateway) sessionOf(ss *mcp.ServerSession) string {
	if g.cfg.Session != "" || ss == nil || ss.ID() == "" {
		return g.session
	}
	return agentcfg.Token(ss.ID())
}

func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}
