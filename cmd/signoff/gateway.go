package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff/internal/cmdflag"
	"github.com/signoff-dev/signoff/internal/mcpgateway"
)

// upstreamList is the repeatable --upstream flag.
type upstreamList []mcpgateway.Upstream

func (l *upstreamList) String() string {
	var parts []string
	for _, u := range *l {
		parts = append(parts, u.Name)
	}
	return strings.Join(parts, ",")
}

func (l *upstreamList) Set(s string) error {
	// SIGNOFF_UPSTREAM may hold several, one per line.
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		u, err := mcpgateway.ParseUpstream(line)
		if err != nil {
			return err
		}
		*l = append(*l, u)
	}
	return nil
}

// runGateway is `signoff mcp-gateway`.
func runGateway(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("signoff mcp-gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg mcpgateway.Config
	fill := cfg.Agent.Bind(fs)
	var ups upstreamList
	fs.Var(&ups, "upstream", "an upstream MCP server, repeatable: `name=http(s)://URL` (streamable HTTP) or name=command args… (stdio)")
	listen := fs.String("listen", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8765, path /mcp); empty: serve one client on stdin/stdout")
	fs.StringVar(&cfg.BearerToken, "listen-token", "", "with --listen: require \"Authorization: Bearer <token>\" of HTTP clients (prefer SIGNOFF_LISTEN_TOKEN)")
	fs.StringVar(&cfg.Session, "session", "", "Signoff session of every call (default: the MCP session id over HTTP, a random id per process over stdio)")
	fs.DurationVar(&cfg.DecisionTimeout, "decision-timeout", 10*time.Minute, "longest wait for a decision on one call; a call still pending then is cancelled and not run")
	fs.DurationVar(&cfg.CallTimeout, "call-timeout", 5*time.Minute, "longest forwarded call to an upstream")
	logLevel := fs.String("log-level", "info", "log level on stderr: debug, info, warn, error")
	cmdflag.Usage(fs, `Usage: signoff mcp-gateway --upstream name=TARGET [--upstream …] [flags]

Serves MCP (stdio, or streamable HTTP with --listen) with the tools of the
upstream servers, listed as <name>__<tool>. Every tools/call goes to Signoff
as tool mcp__<name>__<tool>; allowed calls are forwarded, denied ones return
a tool error with the reason. Each flag can also be set by SIGNOFF_<FLAG>
(SIGNOFF_UPSTREAM: one upstream per line) or in the --config file (YAML;
upstream: a list).

Flags:
`)
	if code, stop := cmdflag.Parse(fs, args); stop {
		return code
	}
	if err := fill(); err != nil {
		fmt.Fprintf(stderr, "signoff mcp-gateway: %v\n", err)
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "signoff mcp-gateway: --log-level: %v\n", err)
		return 2
	}
	cfg.Upstreams = ups
	cfg.Version = version()
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	g, err := mcpgateway.New(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "signoff mcp-gateway: %v\n", err)
		return 1
	}
	defer g.Close()
	if *listen == "" {
		err = g.ServeStdio(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
	} else {
		err = serveHTTP(ctx, *listen, g, cfg.Logger)
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "signoff mcp-gateway: %v\n", err)
		return 1
	}
	return 0
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serveHTTP serves the gateway on addr at /mcp until ctx ends.
func serveHTTP(ctx context.Context, addr string, g *mcpgateway.Gateway, log *slog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", g.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Info("MCP gateway listening", "addr", l.Addr().String(), "path", "/mcp")
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
		return nil
	}
}
