package mcpgateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP says the receiver of notifications/cancelled should not answer the
// cancelled request. The SDK's JSON-RPC layer answers every call it
// handled, so the gateway drops those answers on their way out: on stdio in
// the connection ([cancelTransport]), over stateful streamable HTTP in the
// response of the POST that carried the call ([httpCancels]). Over the
// stateless (2026-07-28) transport a client cancels by closing its POST, and
// there is nothing left to answer on.

const methodCancelled = "notifications/cancelled"

// cancelledID is the request id of a notifications/cancelled message.
func cancelledID(req *jsonrpc.Request) (jsonrpc.ID, bool) {
	if req.IsCall() || req.Method != methodCancelled {
		return jsonrpc.ID{}, false
	}
	var p mcp.CancelledParams
	if json.Unmarshal(req.Params, &p) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return jsonrpc.ID{}, false
	}
	return id, true
}

// cancelTransport is a transport whose connection drops the responses to
// calls the peer cancelled.
type cancelTransport struct{ mcp.Transport }

func (t cancelTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cancelConn{Connection: c, calls: map[jsonrpc.ID]bool{}}, nil
}

type cancelConn struct {
	mcp.Connection
	mu    sync.Mutex
	calls map[jsonrpc.ID]bool // calls read and not yet answered → cancelled
}

func (c *cancelConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil {
		c.mu.Lock()
		if req.IsCall() {
			c.calls[req.ID] = false
		} else if id, ok := cancelledID(req); ok {
			if _, inFlight := c.calls[id]; inFlight {
				c.calls[id] = true
			}
		}
		c.mu.Unlock()
	}
	return msg, err
}

func (c *cancelConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		cancelled := c.calls[resp.ID]
		delete(c.calls, resp.ID)
		c.mu.Unlock()
		if cancelled {
			return nil
		}
	}
	return c.Connection.Write(ctx, msg)
}

// httpCancels drops the answers to cancelled calls over stateful
// streamable HTTP. A call's answer goes out on the POST that carried it; the
// cancellation comes on another POST of the same MCP session. Calls are
// keyed by session id and request id, so a client can cancel only its own.
type httpCancels struct {
	mu    sync.Mutex
	calls map[httpCall]*postCalls
}

type httpCall struct {
	session string
	id      jsonrpc.ID
}

// postCalls are the calls of one POST; its answer is dropped once all of
// them are cancelled.
type postCalls struct {
	mu        sync.Mutex
	left      int // calls not cancelled
	cancelled map[jsonrpc.ID]bool
}

func (p *postCalls) cancel(id jsonrpc.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cancelled[id] {
		p.cancelled[id] = true
		p.left--
	}
}

func (p *postCalls) allCancelled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.left == 0
}

// maxScannedBody is the most of a POST body read to find calls and
// cancellations: the SDK's own limit, which it enforces on the rest.
const maxScannedBody = mcp.DefaultMaxRequestBodyBytes

func (h *httpCancels) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		session := r.Header.Get("Mcp-Session-Id")
		if r.Method != http.MethodPost || session == "" {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxScannedBody+1))
		if err != nil {
			http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		// The SDK reads the body again, and applies its limit to it.
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		calls, cancels := scanPost(body)
		for _, id := range cancels {
			h.mu.Lock()
			p := h.calls[httpCall{session, id}]
			h.mu.Unlock()
			if p != nil {
				p.cancel(id)
			}
		}
		if len(calls) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		p := &postCalls{left: len(calls), cancelled: map[jsonrpc.ID]bool{}}
		h.mu.Lock()
		if h.calls == nil {
			h.calls = map[httpCall]*postCalls{}
		}
		for _, id := range calls {
			h.calls[httpCall{session, id}] = p
		}
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			for _, id := range calls {
				if h.calls[httpCall{session, id}] == p {
					delete(h.calls, httpCall{session, id})
				}
			}
			h.mu.Unlock()
		}()
		next.ServeHTTP(&dropWriter{ResponseWriter: w, drop: p.allCancelled}, r)
		if r.Context().Err() != nil {
			// The client closed the POST before its calls were all
			// answered: with no event store their answers can never be
			// delivered, and some clients (mcp-go) cancel a call over
			// HTTP only so. Cancel them in the session as a
			// notifications/cancelled would; answered ones are ignored.
			for _, id := range calls {
				cancelInSession(next, r, id)
			}
		}
	})
}

// cancelInSession serves next a notifications/cancelled for id, in the MCP
// session of r (its headers, its connection's values) but on a context of
// its own.
func cancelInSession(next http.Handler, r *http.Request, id jsonrpc.ID) {
	params, err := json.Marshal(mcp.CancelledParams{RequestID: id.Raw(), Reason: "the client closed the request"})
	if err != nil {
		return
	}
	body, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: methodCancelled, Params: params})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	cr := r.Clone(ctx)
	cr.Body = io.NopCloser(bytes.NewReader(body))
	cr.ContentLength = int64(len(body))
	next.ServeHTTP(httptest.NewRecorder(), cr)
}

// scanPost returns the ids of the calls in a POST body (one message or a
// batch) and those the body's notifications/cancelled name. A body that does
// not decode is left to the SDK, which answers it with an error.
func scanPost(body []byte) (calls, cancels []jsonrpc.ID) {
	body = bytes.TrimSpace(body)
	var raws []json.RawMessage
	if len(body) > 0 && body[0] == '[' {
		if json.Unmarshal(body, &raws) != nil {
			return nil, nil
		}
	} else {
		raws = []json.RawMessage{body}
	}
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			continue
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			continue
		}
		if req.IsCall() {
			calls = append(calls, req.ID)
		} else if id, ok := cancelledID(req); ok {
			cancels = append(cancels, id)
		}
	}
	return calls, cancels
}

// dropWriter discards the body once drop reports true: what the SDK writes
// after every call of the POST was cancelled is the answer nobody may get.
type dropWriter struct {
	http.ResponseWriter
	drop func() bool
}

func (d *dropWriter) Write(p []byte) (int, error) {
	if d.drop() {
		return len(p), nil
	}
	return d.ResponseWriter.Write(p)
}

func (d *dropWriter) Flush() {
	if f, ok := d.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (d *dropWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }
