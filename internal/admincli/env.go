package admincli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/agentcfg"
	"github.com/signoff-dev/signoff/internal/cmdflag"
	"github.com/signoff-dev/signoff/internal/natsurl"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// env is what one subcommand runs with: its flags (the connection flags of
// every signoff command, --json, --timeout and its own), the connection,
// and where it writes.
type env struct {
	name string
	fs   *flag.FlagSet
	// connFS holds only the connection flags (bound to the same fields):
	// only those are filled from SIGNOFF_* and --config, so that an agent's
	// SIGNOFF_AGENT never becomes the selector of a stop.
	connFS  *flag.FlagSet
	conn    agentcfg.Config
	json    bool
	timeout time.Duration
	out     io.Writer
	errw    io.Writer
	nc      *nats.Conn
	subj    messages.Subjects
}

func newEnv(name, synopsis, about string, out, errw io.Writer) *env {
	e := &env{name: name, out: out, errw: errw}
	e.fs = flag.NewFlagSet("signoff admin "+name, flag.ContinueOnError)
	e.fs.SetOutput(errw)
	e.conn.BindConn(e.fs)
	e.connFS = flag.NewFlagSet("connection", flag.ContinueOnError)
	e.connFS.SetOutput(io.Discard)
	var shadow agentcfg.Config
	shadow.BindConn(e.connFS)
	e.fs.BoolVar(&e.json, "json", false, "print JSON (for scripts) instead of a table")
	e.fs.DurationVar(&e.timeout, "timeout", 10*time.Second, "how long to wait for the brokers")
	cmdflag.Usage(e.fs, fmt.Sprintf("Usage: signoff admin %s %s\n\n%s\n\nFlags:\n", name, synopsis, about))
	return e
}

// parse parses args, fills the connection flags from the environment and
// the --config file, and checks them. On a problem it prints it and
// returns false (the caller exits ExitUsage).
func (e *env) parse(args []string) bool {
	if err := e.fs.Parse(flagsFirst(e.fs, args)); err != nil {
		return false
	}
	// Mirror the connection flags given on the command line into connFS,
	// fill the rest there, and copy the values back.
	e.fs.Visit(func(f *flag.Flag) {
		if e.connFS.Lookup(f.Name) != nil {
			_ = e.connFS.Set(f.Name, f.Value.String())
		}
	})
	if err := agentcfg.Fill(e.connFS, "config"); err != nil {
		return e.usageErr("configuration: %v", err)
	}
	var errs []error
	e.connFS.VisitAll(func(f *flag.Flag) {
		if err := e.fs.Set(f.Name, f.Value.String()); err != nil {
			errs = append(errs, err)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return e.usageErr("configuration: %v", err)
	}
	if err := e.conn.ValidateConn(); err != nil {
		return e.usageErr("%v", err)
	}
	if e.timeout <= 0 {
		return e.usageErr("--timeout %s must be positive", e.timeout)
	}
	e.subj, _ = messages.NewSubjects(e.conn.Prefix)
	return true
}

// usageErr prints a usage problem and returns false.
func (e *env) usageErr(format string, args ...any) bool {
	fmt.Fprintf(e.errw, "signoff admin %s: %s\n", e.name, fmt.Sprintf(format, args...))
	return false
}

// connect connects to NATS; on failure it prints why and returns false
// (the caller exits ExitNoBroker).
func (e *env) connect(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	nc, err := e.conn.Connect(ctx, "signoff admin "+e.name)
	if err != nil {
		fmt.Fprintf(e.errw, "signoff admin %s: %v\n", e.name, err)
		return false
	}
	e.nc = nc
	return true
}

func (e *env) close() {
	if e.nc != nil {
		e.nc.Close()
	}
}

// adminReply is an admin reply or an error reply.
type adminReply struct {
	messages.AdminReply
	Error *messages.ErrorBody `json:"error,omitempty"`
}

// opError is a failed admin request and the exit status it means.
type opError struct {
	exit int
	msg  string
}

func (e *opError) Error() string { return e.msg }

// request sends one admin request to one broker (the queue group).
func (e *env) request(ctx context.Context, op string, req messages.AdminRequest) (messages.AdminReply, *opError) {
	req.V = messages.Version
	data, err := json.Marshal(req)
	if err != nil {
		return messages.AdminReply{}, &opError{ExitFailed, err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	msg, err := e.nc.RequestWithContext(ctx, e.subj.Admin(op), data)
	if err != nil {
		return messages.AdminReply{}, e.noBroker(err)
	}
	return decodeReply(msg.Data)
}

func (e *env) noBroker(err error) *opError {
	if errors.Is(err, nats.ErrNoResponders) {
		return &opError{ExitNoBroker, "no broker is listening on the admin subjects (is a broker running, with this --prefix?)" + natsurl.PermissionHint(e.nc)}
	}
	return &opError{ExitNoBroker, "no broker answered: " + err.Error() + natsurl.PermissionHint(e.nc)}
}

func decodeReply(data []byte) (messages.AdminReply, *opError) {
	var r adminReply
	if err := json.Unmarshal(data, &r); err != nil {
		return messages.AdminReply{}, &opError{ExitFailed, "unreadable reply: " + err.Error()}
	}
	if r.Error != nil {
		exit := ExitFailed
		if r.Error.Code == messages.CodeNotFound {
			exit = ExitNotFound
		}
		return messages.AdminReply{}, &opError{exit, string(r.Error.Code) + ": " + r.Error.Message}
	}
	return r.AdminReply, nil
}

// scatter sends an admin request every replica answers and gathers the
// replies that arrive within wait (or the timeout, if shorter).
func (e *env) scatter(ctx context.Context, op string, wait time.Duration) ([]messages.AdminReply, []*opError, *opError) {
	inbox := e.nc.NewRespInbox()
	sub, err := e.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, nil, &opError{ExitNoBroker, err.Error()}
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := e.nc.PublishRequest(e.subj.Admin(op), inbox, []byte(`{"v":1}`)); err != nil {
		return nil, nil, &opError{ExitNoBroker, err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, min(wait, e.timeout))
	defer cancel()
	var replies []messages.AdminReply
	var failed []*opError
	for {
		msg, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			break
		}
		if len(msg.Data) == 0 && msg.Header.Get("Status") == "503" {
			return nil, nil, e.noBroker(nats.ErrNoResponders)
		}
		r, oe := decodeReply(msg.Data)
		if oe != nil {
			failed = append(failed, oe)
			continue
		}
		replies = append(replies, r)
	}
	if len(replies) == 0 && len(failed) == 0 {
		return nil, nil, &opError{ExitNoBroker, "no broker answered within " + min(wait, e.timeout).String() + natsurl.PermissionHint(e.nc)}
	}
	return replies, failed, nil
}

// fail prints a failed operation and returns its exit status.
func (e *env) fail(oe *opError) int {
	fmt.Fprintf(e.errw, "signoff admin %s: %s\n", e.name, oe.msg)
	return oe.exit
}

// emit prints v as JSON (--json), or the table table writes.
func (e *env) emit(v any, table func(w io.Writer)) int {
	if e.json {
		enc := json.NewEncoder(e.out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			fmt.Fprintf(e.errw, "signoff admin %s: %v\n", e.name, err)
			return ExitFailed
		}
		return ExitOK
	}
	tw := tabwriter.NewWriter(e.out, 2, 8, 2, ' ', 0)
	table(tw)
	_ = tw.Flush()
	return ExitOK
}

// row writes one tab-separated table row; empty cells show as "-".
func row(w io.Writer, cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

// when formats a time for a table: UTC, to the second.
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateTime)
}

// operator is who runs the command, for the stop's record: --by, else $USER.
func operator(by string) string {
	if by != "" {
		return by
	}
	return os.Getenv("USER")
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// flagsFirst reorders args so that flags come before the positional
// arguments, which keep their order after a "--": the docs write
// `signoff admin policy reload --wait 1s` and `revoke ID --json`, and the
// flag package stops at the first positional (README walk W2: --json was
// sent as a grant id). A flag's value is the next argument unless the flag
// is boolean or written as --name=value; after "--" everything is
// positional.
func flagsFirst(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue // the flag package reports it
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if len(pos) == 0 {
		return flags
	}
	return append(append(flags, "--"), pos...)
}
