package redisstore

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/pkg/session"
)

// Defaults.
const (
	DefaultKeyPrefix = "signoff"
	DefaultOpTimeout = 2 * time.Second
	// DefaultReadRoundTrips is the default of Options.ReadRoundTrips.
	DefaultReadRoundTrips = 1
)

// Options configures a [Store]. Exactly one way to reach Redis must be given:
// URL, SentinelAddrs with MasterName, or Client.
type Options struct {
	// URL of the Redis deployment:
	//
	//	redis://[[user]:password@]host:port[/db]      one server (go-redis ParseURL
	//	rediss://…                                     options are accepted as query)
	//	redis+sentinel://[[user]:password@]h1:26379,h2:26379/mymaster[/db]
	//	    [?sentinel_password=…&sentinel_username=…&db=…]
	//	redis+cluster://[[user]:password@]h1:6379,h2:6379
	//
	// The user and password of a sentinel URL are the master's; the
	// sentinels' own credentials go in the query. A "rediss+" scheme uses
	// TLS.
	URL string

	// SentinelAddrs and MasterName reach a Sentinel-managed master without a
	// URL; Username, Password and DB apply to the master.
	SentinelAddrs    []string
	MasterName       string
	SentinelPassword string
	Username         string
	Password         string
	DB               int

	// Client is a client to use instead of one built from the fields above
	// (for tests or shared pools). The store does not close it. Configure it
	// like the store's own: ContextTimeoutEnabled true and MaxRetries -1
	// (see docs/STATE.md: a retried script may have run already).
	Client redis.UniversalClient

	// KeyPrefix starts every key (default "signoff"). It must not contain
	// '{' or '}', which would break the hash tags.
	KeyPrefix string
	// Retention is how long settled requests stay readable and how long an
	// unused session keeps its grants (default 24 h).
	Retention time.Duration
	// OpTimeout bounds every Store method call (default 2 s). When Redis does
	// not answer in time the call fails with session.ErrUnavailable.
	OpTimeout time.Duration
	// EffectLease is how long the caller of a transition alone carries out
	// the effects it recorded in the outbox, and how long a ClaimEffects
	// caller holds the entries it claimed (default
	// session.DefaultEffectLease, 5 s). It must exceed the time a broker
	// takes to carry effects out, or they are carried out twice.
	EffectLease time.Duration
	// ReadRoundTrips is how many Lookup round trips may be in flight at
	// once (default 1). While that many are, further Lookups queue and go
	// out together in one pipeline as soon as one ends: under load, one
	// round trip serves many requests (docs/STATE.md, "Coalesced reads").
	// 2 keeps Lookups going past one stalled connection at the price of
	// smaller batches; a very large value turns coalescing off.
	ReadRoundTrips int
	// Logger receives warnings about best-effort index maintenance
	// (default: discard).
	Logger *slog.Logger
}

func (o *Options) setDefaults() {
	if o.KeyPrefix == "" {
		o.KeyPrefix = DefaultKeyPrefix
	}
	if o.Retention == 0 {
		o.Retention = session.DefaultRetention
	}
	if o.OpTimeout == 0 {
		o.OpTimeout = DefaultOpTimeout
	}
	if o.ReadRoundTrips == 0 {
		o.ReadRoundTrips = DefaultReadRoundTrips
	}
	if o.EffectLease == 0 {
		o.EffectLease = session.DefaultEffectLease
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports the first invalid option; the error wraps
// session.ErrInvalid.
func (o *Options) Validate() error {
	ways := 0
	if o.URL != "" {
		ways++
	}
	if len(o.SentinelAddrs) > 0 || o.MasterName != "" {
		ways++
		if len(o.SentinelAddrs) == 0 || o.MasterName == "" {
			return invalid("SentinelAddrs and MasterName go together (got %d addresses, master %q)", len(o.SentinelAddrs), o.MasterName)
		}
	}
	if o.Client != nil {
		ways++
	}
	switch {
	case ways == 0:
		return invalid("no Redis given: set URL, SentinelAddrs with MasterName, or Client")
	case ways > 1:
		return invalid("set only one of URL, SentinelAddrs/MasterName and Client")
	case strings.ContainsAny(o.KeyPrefix, "{}"):
		return invalid("KeyPrefix %q contains '{' or '}'", o.KeyPrefix)
	case o.Retention < time.Millisecond:
		return invalid("Retention %v: want at least 1ms", o.Retention)
	case o.OpTimeout < time.Millisecond:
		return invalid("OpTimeout %v: want at least 1ms", o.OpTimeout)
	case o.EffectLease < 10*time.Millisecond:
		return invalid("EffectLease %v: want at least 10ms", o.EffectLease)
	case o.ReadRoundTrips < 0:
		return invalid("ReadRoundTrips %d: want at least 1 (0 for the default, %d)", o.ReadRoundTrips, DefaultReadRoundTrips)
	}
	return nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("redisstore: options: %w: %s", session.ErrInvalid, fmt.Sprintf(format, args...))
}

// newClient builds the client the options describe, configured so that
// every call honours its context deadline and nothing is retried behind the
// store's back.
func (o *Options) newClient() (redis.UniversalClient, error) {
	if o.URL == "" {
		return redis.NewFailoverClient(o.tune(&redis.FailoverOptions{
			MasterName:       o.MasterName,
			SentinelAddrs:    o.SentinelAddrs,
			SentinelPassword: o.SentinelPassword,
			Username:         o.Username,
			Password:         o.Password,
			DB:               o.DB,
		})), nil
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		// url.Error repeats the URL, password included: keep only why.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, invalid("URL does not parse: %v", err)
	}
	switch u.Scheme {
	case "redis", "rediss":
		ro, err := redis.ParseURL(o.URL)
		if err != nil {
			return nil, invalid("URL %s: %v", u.Redacted(), err)
		}
		name := o.tuneFields(&ro.ContextTimeoutEnabled, &ro.MaxRetries, &ro.DialTimeout, &ro.ReadTimeout, &ro.WriteTimeout, &ro.PoolTimeout)
		if ro.ClientName == "" {
			ro.ClientName = name
		}
		return redis.NewClient(ro), nil
	case "redis+sentinel", "rediss+sentinel":
		fo, err := parseSentinelURL(u)
		if err != nil {
			return nil, err
		}
		return redis.NewFailoverClient(o.tune(fo)), nil
	case "redis+cluster", "rediss+cluster":
		co, err := parseClusterURL(u)
		if err != nil {
			return nil, err
		}
		co.ClientName = o.tuneFields(&co.ContextTimeoutEnabled, &co.MaxRetries, &co.DialTimeout, &co.ReadTimeout, &co.WriteTimeout, &co.PoolTimeout)
		return redis.NewClusterClient(co), nil
	}
	return nil, invalid("URL scheme %q: want redis, rediss, redis+sentinel, rediss+sentinel, redis+cluster or rediss+cluster", u.Scheme)
}

// tune sets the timeouts and retry policy the store relies on.
func (o *Options) tune(fo *redis.FailoverOptions) *redis.FailoverOptions {
	fo.ContextTimeoutEnabled = true
	// A script whose reply was lost may have run: retrying it could turn a
	// created request into "already exists" or a counted vote into a
	// duplicate. Calls fail instead, and callers fail closed.
	fo.MaxRetries = -1
	fo.DialTimeout = o.OpTimeout
	fo.ReadTimeout = o.OpTimeout
	fo.WriteTimeout = o.OpTimeout
	fo.PoolTimeout = o.OpTimeout
	fo.ClientName = "signoff"
	return fo
}

// tuneFields sets what tune sets on the options of a client that is not a
// failover one (a plain or a cluster client), given their fields, and
// returns the client name tune sets.
func (o *Options) tuneFields(contextTimeout *bool, maxRetries *int, dial, read, write, pool *time.Duration) string {
	fo := o.tune(&redis.FailoverOptions{})
	*contextTimeout, *maxRetries = fo.ContextTimeoutEnabled, fo.MaxRetries
	*dial, *read, *write, *pool = fo.DialTimeout, fo.ReadTimeout, fo.WriteTimeout, fo.PoolTimeout
	return fo.ClientName
}

// parseSentinelURL parses
// redis+sentinel://[[user]:password@]host1:port1,host2:port2/master[/db][?db=N&sentinel_password=…&sentinel_username=…].
func parseSentinelURL(u *url.URL) (*redis.FailoverOptions, error) {
	addrs, err := splitHosts(u.Host, "26379")
	if err != nil {
		return nil, err
	}
	fo := &redis.FailoverOptions{SentinelAddrs: addrs}
	if u.User != nil {
		fo.Username = u.User.Username()
		fo.Password, _ = u.User.Password()
	}
	parts := strings.FieldsFunc(u.Path, func(r rune) bool { return r == '/' })
	switch len(parts) {
	case 1, 2:
		fo.MasterName = parts[0]
		if len(parts) == 2 {
			if fo.DB, err = strconv.Atoi(parts[1]); err != nil {
				return nil, invalid("sentinel URL %s: database %q is not a number", u.Redacted(), parts[1])
			}
		}
	default:
		return nil, invalid("sentinel URL %s: path must be /<master name>[/<db>]", u.Redacted())
	}
	q := u.Query()
	for k, v := range q {
		switch k {
		case "db":
			if fo.DB, err = strconv.Atoi(v[len(v)-1]); err != nil {
				return nil, invalid("sentinel URL %s: db=%q is not a number", u.Redacted(), v[len(v)-1])
			}
		case "sentinel_password":
			fo.SentinelPassword = v[len(v)-1]
		case "sentinel_username":
			fo.SentinelUsername = v[len(v)-1]
		default:
			return nil, invalid("sentinel URL %s: unknown parameter %q", u.Redacted(), k)
		}
	}
	if strings.HasPrefix(u.Scheme, "rediss") {
		fo.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return fo, nil
}

// parseClusterURL parses redis+cluster://[[user]:password@]host1:port1,host2:port2.
func parseClusterURL(u *url.URL) (*redis.ClusterOptions, error) {
	addrs, err := splitHosts(u.Host, "6379")
	if err != nil {
		return nil, err
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		return nil, invalid("cluster URL %s: a cluster has no database path (got %q)", u.Redacted(), p)
	}
	if len(u.Query()) > 0 {
		return nil, invalid("cluster URL %s: no parameters are supported", u.Redacted())
	}
	co := &redis.ClusterOptions{Addrs: addrs}
	if u.User != nil {
		co.Username = u.User.Username()
		co.Password, _ = u.User.Password()
	}
	if strings.HasPrefix(u.Scheme, "rediss") {
		host, _, _ := net.SplitHostPort(addrs[0])
		co.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	}
	return co, nil
}

func splitHosts(hosts, defaultPort string) ([]string, error) {
	if hosts == "" {
		return nil, invalid("URL has no host")
	}
	var addrs []string
	for h := range strings.SplitSeq(hosts, ",") {
		if h == "" {
			return nil, invalid("URL host list %q has an empty entry", hosts)
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			var ae *net.AddrError
			if !errors.As(err, &ae) || !strings.Contains(ae.Err, "missing port") {
				return nil, invalid("URL host %q: %v", h, err)
			}
			h = net.JoinHostPort(h, defaultPort)
		}
		addrs = append(addrs, h)
	}
	return addrs, nil
}
