package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/pkg/session"
)

// Store is the Redis [session.Store]. It is safe for concurrent use by many
// goroutines and many processes sharing one Redis deployment.
type Store struct {
	rdb       redis.UniversalClient
	ownClient bool
	k         keys
	retention time.Duration
	retMillis string // retention in ms, as scripts take it
	opTimeout time.Duration
	obLease   string // outbox lease in µs, as scripts take it
	log       *slog.Logger
	closed    atomic.Bool
	// duePerSession estimates how many due requests a due session holds,
	// so that ClaimExpired leases about as many sessions as its limit needs.
	duePerSession ewma
	// reads coalesces concurrent Lookups (coalesce.go).
	reads reads
	// unreleased holds lease finalizations that failed (expiry.go).
	unreleased releases
}

var _ session.Store = (*Store)(nil)

// New connects to the Redis deployment opts names, checks that it answers
// and supports the scripts (Redis 7 or later), and returns the store.
func New(ctx context.Context, opts Options) (*Store, error) {
	opts.setDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	rdb, own := opts.Client, false
	if rdb == nil {
		c, err := opts.newClient()
		if err != nil {
			return nil, err
		}
		rdb, own = c, true
	}
	s := &Store{
		rdb:       rdb,
		ownClient: own,
		k:         keys{prefix: opts.KeyPrefix},
		retention: opts.Retention,
		retMillis: strconv.FormatInt(max(opts.Retention.Milliseconds(), 1), 10),
		opTimeout: opts.OpTimeout,
		obLease:   strconv.FormatInt(opts.EffectLease.Microseconds(), 10),
		log:       opts.Logger,
	}
	s.reads = reads{rdb: rdb, timeout: opts.OpTimeout, limit: opts.ReadRoundTrips}
	if err := s.load(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// load checks that Redis answers and loads every script, so that a Redis
// older than 7 (no script flags) is refused at start rather than on the
// first request.
func (s *Store) load(ctx context.Context) error {
	// Loading every script is a start-up step of a dozen round trips, not
	// one operation: it gets at least loadTimeout, so that a Redis slowed
	// by a restart or a busy host does not fail a broker's start that a
	// moment's patience would let through.
	ctx, cancel := context.WithTimeout(ctx, max(s.opTimeout, loadTimeout))
	defer cancel()
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return s.fail("connect", err)
	}
	for _, sc := range scripts {
		if err := sc.Load(ctx, s.rdb).Err(); err != nil {
			return s.fail("load script "+sc.name+" (the store needs Redis 7.0 or later)", err)
		}
	}
	return nil
}

// loadTimeout is the least time New gives the scripts to load.
const loadTimeout = 5 * time.Second

// Close releases the client if the store built it. Later calls fail with
// session.ErrUnavailable. It is idempotent.
func (s *Store) Close() error {
	if s.closed.Swap(true) || !s.ownClient {
		return nil
	}
	if err := s.rdb.Close(); err != nil && !errors.Is(err, redis.ErrClosed) {
		return fmt.Errorf("redisstore: close: %w", err)
	}
	return nil
}

// begin starts a call: it refuses calls on a closed store or with a done
// context, and bounds the call by OpTimeout.
func (s *Store) begin(ctx context.Context, op string) (context.Context, context.CancelFunc, error) {
	if s.closed.Load() {
		return nil, nil, fmt.Errorf("redisstore: %s: store is closed: %w", op, session.ErrUnavailable)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.opTimeout)
	return ctx, cancel, nil
}

// beginSession checks sessionID as every store does and as a hash tag
// needs (the errors wrapped for op), then begins op.
func (s *Store) beginSession(ctx context.Context, op, sessionID string) (context.Context, context.CancelFunc, error) {
	if err := session.CheckSession(sessionID); err != nil {
		return nil, nil, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	return s.beginNames(ctx, op, sessionID, "")
}

// beginKey is beginSession for the key of a request.
func (s *Store) beginKey(ctx context.Context, op, sessionID, requestID string) (context.Context, context.CancelFunc, error) {
	if err := session.CheckKey(sessionID, requestID); err != nil {
		return nil, nil, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	return s.beginNames(ctx, op, sessionID, "")
}

// beginNames checks that a session, an agent and teams can be hash tags
// (checkNames; the error wrapped for op), then begins op. An empty name
// passes: callers that require one refuse it first.
func (s *Store) beginNames(ctx context.Context, op, sessionID, agentID string, teams ...string) (context.Context, context.CancelFunc, error) {
	if err := checkNames(sessionID, agentID, teams...); err != nil {
		return nil, nil, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	return s.begin(ctx, op)
}

// Now returns Redis TIME.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	ctx, cancel, err := s.begin(ctx, "now")
	if err != nil {
		return time.Time{}, err
	}
	defer cancel()
	t, err := s.rdb.Time(ctx).Result()
	if err != nil {
		return time.Time{}, s.fail("now", err)
	}
	return t.UTC(), nil
}

// Ping checks that Redis answers.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel, err := s.begin(ctx, "ping")
	if err != nil {
		return err
	}
	defer cancel()
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return s.fail("ping", err)
	}
	return nil
}

// fail wraps an error of a Redis call. Whatever says that Redis could not
// be reached or could not serve (network errors, timeouts, a closed client,
// a server loading, read-only, out of memory, in failover…) wraps
// session.ErrUnavailable; a cancelled context and other server errors are
// wrapped as they are.
func (s *Store) fail(op string, err error) error {
	if errors.Is(err, context.Canceled) || !unavailable(err) {
		return fmt.Errorf("redisstore: %s: %w", op, err)
	}
	return fmt.Errorf("redisstore: %s: %w: %w", op, session.ErrUnavailable, err)
}

// transient lists the prefixes of Redis error replies that mean "not now".
var transient = []string{
	"LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "OOM",
	"BUSY", "NOREPLICAS", "MOVED", "ASK", "NOAUTH", "WRONGPASS", "NOPERM",
}

func unavailable(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return true // network errors, timeouts, a closed client or pool
	}
	msg := re.Error()
	for _, p := range transient {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// call is one script call of a pipeline.
type call struct {
	sc   *script
	keys []string
	args []any
	cmd  *redis.Cmd
}

func scall(sc *script, keys []string, args ...any) *call {
	return &call{sc: sc, keys: keys, args: args}
}

// reply returns a script call's result.
func (c *call) reply() (any, error) { return c.cmd.Result() }

// exec sends script calls in one pipeline: one round trip per Redis node.
// Scripts go by EVALSHA; the ones Redis does not know (NOSCRIPT: cache
// flushed, restart, failover to a replica that never loaded them) are sent
// again in a second pipeline by EVAL, which also caches them. Each call
// keeps its own result and error.
func (s *Store) exec(ctx context.Context, calls ...*call) {
	if len(calls) == 1 {
		// One script: no pipeline needed (go-redis's single-command path
		// is a little cheaper), same NOSCRIPT fallback.
		c := calls[0]
		c.cmd = c.sc.Run(ctx, s.rdb, c.keys, c.args...)
		return
	}
	run := func(cs []*call, byEval bool) {
		_, _ = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range cs {
				if byEval {
					c.cmd = c.sc.Eval(ctx, p, c.keys, c.args...)
				} else {
					c.cmd = c.sc.EvalSha(ctx, p, c.keys, c.args...)
				}
			}
			return nil
		})
	}
	run(calls, false)
	var again []*call
	for _, c := range calls {
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
			again = append(again, c)
		}
	}
	if len(again) > 0 {
		run(again, true)
	}
}

// execAll sends calls as exec does and fails op with the first error
// among them; it reads no reply.
func (s *Store) execAll(ctx context.Context, op string, calls ...*call) error {
	s.exec(ctx, calls...)
	for _, c := range calls {
		if _, err := c.reply(); err != nil {
			return s.fail(op, err)
		}
	}
	return nil
}

// run executes one script in its own round trip.
func (s *Store) run(ctx context.Context, sc *script, keys []string, args ...any) (any, error) {
	c := scall(sc, keys, args...)
	s.exec(ctx, c)
	return c.reply()
}

// runStrings runs sc like run and reads its reply, an array of strings;
// its errors are wrapped for op (a reply of another shape is corrupt).
func (s *Store) runStrings(ctx context.Context, op string, sc *script, keys []string, args ...any) ([]string, error) {
	v, err := s.run(ctx, sc, keys, args...)
	if err != nil {
		return nil, s.fail(op, err)
	}
	a, err := asStrings(v)
	if err != nil {
		return nil, s.corrupt(op, err)
	}
	return a, nil
}

// Helpers that read script replies. Scripts return only integers, strings
// and arrays of them (never Lua false, whose conversion differs between
// RESP2 and RESP3).

func asSlice(v any) ([]any, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("script reply %T, want an array", v)
	}
	return a, nil
}

func asString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	}
	return "", fmt.Errorf("script reply element %T, want a string", v)
}

func asInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return 0, fmt.Errorf("script reply element %T, want an integer", v)
}

// pairs decodes {id, record, id, record, …} of session sess.
func pairs(sess string, v any) ([]*session.Record, error) {
	a, err := asSlice(v)
	if err != nil {
		return nil, err
	}
	if len(a)%2 != 0 {
		return nil, fmt.Errorf("script reply has %d elements, want pairs", len(a))
	}
	out := make([]*session.Record, 0, len(a)/2)
	for i := 0; i < len(a); i += 2 {
		id, err := asString(a[i])
		if err != nil {
			return nil, err
		}
		raw, err := asString(a[i+1])
		if err != nil {
			return nil, err
		}
		r, err := decodeRecord(sess, id, raw)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
