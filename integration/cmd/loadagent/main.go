package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1 // the run finished but some request did not end as it should
	exitUsage  = 2 // bad flags, or the plane could not be reached at all
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// config is the command line.
type config struct {
	natsURL      string
	natsCreds    string
	natsNKey     string
	natsUser     string
	natsPassword string
	inboxPrefix  string
	prefix       string

	agents        int
	requests      int
	conns         int
	mix           mix
	calls         map[kind]callSpec
	sessionPrefix string
	requestedBy   string
	approver      string
	askTTL        time.Duration

	connectTimeout time.Duration
	timeout        time.Duration
	settle         time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "loadagent: %v\n", err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()

	conns, err := connect(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "loadagent: %v\n", err)
		return exitUsage
	}
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
	}()

	sum, err := runFleet(ctx, cfg, conns)
	if err != nil {
		fmt.Fprintf(stderr, "loadagent: %v\n", err)
		return exitUsage
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sum); err != nil {
		fmt.Fprintf(stderr, "loadagent: write summary: %v\n", err)
		return exitFailed
	}
	if !sum.OK {
		return exitFailed
	}
	return exitOK
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("loadagent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{calls: map[kind]callSpec{}}
	fs.StringVar(&cfg.natsURL, "nats", envOr("SIGNOFF_NATS", nats.DefaultURL), "NATS server `URLs`, comma-separated; env SIGNOFF_NATS")
	fs.StringVar(&cfg.natsCreds, "nats-creds", os.Getenv("SIGNOFF_NATS_CREDS"), "NATS credentials `file` (JWT + nkey seed); env SIGNOFF_NATS_CREDS")
	fs.StringVar(&cfg.natsNKey, "nats-nkey", os.Getenv("SIGNOFF_NATS_NKEY"), "NATS nkey seed `file`; env SIGNOFF_NATS_NKEY")
	fs.StringVar(&cfg.natsUser, "nats-user", os.Getenv("SIGNOFF_NATS_USER"), "NATS user name; env SIGNOFF_NATS_USER")
	fs.StringVar(&cfg.natsPassword, "nats-password", "", "NATS password (prefer env SIGNOFF_NATS_PASSWORD)")
	fs.StringVar(&cfg.inboxPrefix, "inbox-prefix", "", "reply subject `prefix` (deploy/nats's agent user may only read _INBOX.agent)")
	fs.StringVar(&cfg.prefix, "prefix", messages.DefaultPrefix, "subject prefix")
	fs.IntVar(&cfg.agents, "agents", 10, "agents (sessions) running at once")
	fs.IntVar(&cfg.requests, "requests", 20, "requests per agent, one after the other")
	fs.IntVar(&cfg.conns, "conns", 0, "NATS connections the agents share (default: min(agents, 4))")
	mixFlag := fs.String("mix", "allow=8,deny=1,ask=1", "weights of the `kinds` of call: allow=N,deny=N,ask=N")
	allowCall := fs.String("allow-call", defaultCalls[kindAllow].String(), "the call the policy allows, as `JSON` {\"tool\",\"arguments\"}")
	denyCall := fs.String("deny-call", defaultCalls[kindDeny].String(), "the call the policy denies, as `JSON`")
	askCall := fs.String("ask-call", defaultCalls[kindAsk].String(), "the call the policy asks about, as `JSON`")
	fs.StringVar(&cfg.sessionPrefix, "session-prefix", "", "session ids are PREFIX-N (default: load-<unique id>, new on each run)")
	fs.StringVar(&cfg.requestedBy, "requested-by", "", "the human the agents work for (requested_by); may not approve")
	fs.StringVar(&cfg.approver, "approver", "", "answer the questions of this run's sessions over NATS as this approver `id` (approve once); a member of the routed team")
	fs.DurationVar(&cfg.askTTL, "ask-ttl", 0, "how long an asked call waits for an approver (ttl_ms; capped by the policy; 0: the policy's)")
	fs.DurationVar(&cfg.connectTimeout, "connect-timeout", 30*time.Second, "how long to keep trying to reach NATS at start")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "bound on the whole run; requests still waiting then count as without decision")
	fs.DurationVar(&cfg.settle, "settle", 500*time.Millisecond, "how long to keep listening for late duplicate decisions after the last request")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (see -help)", fs.Arg(0))
	}
	if cfg.natsPassword == "" {
		cfg.natsPassword = os.Getenv("SIGNOFF_NATS_PASSWORD")
	}
	var err error
	if cfg.mix, err = parseMix(*mixFlag); err != nil {
		return nil, fmt.Errorf("-mix: %w", err)
	}
	for k, s := range map[kind]string{kindAllow: *allowCall, kindDeny: *denyCall, kindAsk: *askCall} {
		c, err := parseCall(s)
		if err != nil {
			return nil, fmt.Errorf("-%s-call: %w", k, err)
		}
		cfg.calls[k] = c
	}
	switch {
	case cfg.agents < 1:
		return nil, fmt.Errorf("-agents %d: want at least 1", cfg.agents)
	case cfg.requests < 1:
		return nil, fmt.Errorf("-requests %d: want at least 1", cfg.requests)
	case cfg.conns < 0:
		return nil, fmt.Errorf("-conns %d: want 0 (automatic) or more", cfg.conns)
	case cfg.askTTL < 0, cfg.timeout <= 0, cfg.connectTimeout <= 0, cfg.settle < 0:
		return nil, errors.New("durations must be positive (-ask-ttl and -settle may be 0)")
	}
	if cfg.conns == 0 {
		cfg.conns = min(cfg.agents, 4)
	}
	cfg.conns = min(cfg.conns, cfg.agents)
	if _, err := messages.NewSubjects(cfg.prefix); err != nil {
		return nil, fmt.Errorf("-prefix: %w", err)
	}
	if cfg.inboxPrefix != "" {
		if err := nats.CustomInboxPrefix(cfg.inboxPrefix)(&nats.Options{}); err != nil {
			return nil, fmt.Errorf("-inbox-prefix: %w", err)
		}
	}
	if cfg.sessionPrefix == "" {
		cfg.sessionPrefix = "load-" + strings.ToLower(nuid.Next())
	}
	// The last session id is the longest: checking it checks them all.
	if err := messages.ValidateToken("-session-prefix", sessionID(cfg.sessionPrefix, cfg.agents-1)); err != nil {
		return nil, err
	}
	if cfg.approver != "" && cfg.approver == cfg.requestedBy {
		return nil, fmt.Errorf("-approver %q is also -requested-by: the broker refuses self-approval", cfg.approver)
	}
	return cfg, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// connect opens cfg.conns connections, retrying until NATS answers or
// cfg.connectTimeout passes; they reconnect without end afterwards.
func connect(ctx context.Context, cfg *config) ([]*nats.Conn, error) {
	opts := []nats.Option{
		nats.MaxReconnects(-1),
		nats.ReconnectWait(100 * time.Millisecond),
		nats.Timeout(2 * time.Second),
	}
	switch {
	case cfg.natsCreds != "":
		opts = append(opts, nats.UserCredentials(cfg.natsCreds))
	case cfg.natsNKey != "":
		o, err := nats.NkeyOptionFromSeed(cfg.natsNKey)
		if err != nil {
			return nil, fmt.Errorf("-nats-nkey: %w", err)
		}
		opts = append(opts, o)
	case cfg.natsUser != "":
		opts = append(opts, nats.UserInfo(cfg.natsUser, cfg.natsPassword))
	}
	if cfg.inboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(cfg.inboxPrefix))
	}
	cctx, cancel := context.WithTimeout(ctx, cfg.connectTimeout)
	defer cancel()
	var conns []*nats.Conn
	for i := range cfg.conns {
		nc, err := dial(cctx, cfg.natsURL, append(opts, nats.Name(fmt.Sprintf("signoff-loadagent-%d", i)))...)
		if err != nil {
			for _, c := range conns {
				c.Close()
			}
			return nil, err
		}
		conns = append(conns, nc)
	}
	return conns, nil
}

// dial connects to url, trying again every 250 ms while ctx lasts (NATS may
// still be starting next to us).
func dial(ctx context.Context, url string, opts ...nats.Option) (*nats.Conn, error) {
	for {
		nc, err := nats.Connect(url, opts...)
		if err == nil {
			return nc, nil
		}
		if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) {
			return nil, fmt.Errorf("connect to %s: %w", url, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connect to %s: %w (last error: %v)", url, ctx.Err(), err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
