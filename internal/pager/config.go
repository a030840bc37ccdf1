package pager

import (
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Defaults of [Config].
const (
	DefaultPagerDutyURL  = "https://events.pagerduty.com"
	DefaultOpsgenieURL   = "https://api.opsgenie.com"
	DefaultOpsgenieEUURL = "https://api.eu.opsgenie.com"
	DefaultDedupPrefix   = "signoff"
	DefaultSource        = "signoff"
	DefaultSeverity      = SeverityError
	DefaultTimeout       = 10 * time.Second
	DefaultMaxAttempts   = 5
	DefaultMinBackoff    = 500 * time.Millisecond
	DefaultMaxBackoff    = 30 * time.Second
	DefaultMaxRetryAfter = 2 * time.Minute
)

// Config is one entry of the `pagers:` map (docs/PAGING.md). Fields that
// belong to the other vendor are errors, so a mistyped kind is caught.
type Config struct {
	// Name is the pager's name (the map key); it appears in logs, errors
	// and escalation steps (`page: <name>`).
	Name string `yaml:"-"`
	// Kind is "pagerduty" or "opsgenie". Required.
	Kind Kind `yaml:"kind"`

	// RoutingKeyFile or RoutingKeyEnv holds the PagerDuty integration key
	// (Events API v2, 32 characters). Exactly one, for kind pagerduty.
	RoutingKeyFile string `yaml:"routing_key_file"`
	RoutingKeyEnv  string `yaml:"routing_key_env"`

	// APIKeyFile or APIKeyEnv holds the Opsgenie API integration key (sent
	// as "Authorization: GenieKey …"). Exactly one, for kind opsgenie.
	APIKeyFile string `yaml:"api_key_file"`
	APIKeyEnv  string `yaml:"api_key_env"`
	// Region is "us" (default) or "eu" for Opsgenie: it picks the base URL.
	Region string `yaml:"region"`
	// Responders are Opsgenie responders, "team:<name>", "user:<username>",
	// "escalation:<name>" or "schedule:<name>"; empty means the API
	// integration's own team.
	Responders []string `yaml:"responders"`
	// Tags are Opsgenie tags (at most 20, 50 characters each).
	Tags []string `yaml:"tags"`

	// BaseURL overrides the vendor's endpoint (default
	// https://events.pagerduty.com, https://api.opsgenie.com, or
	// https://api.eu.opsgenie.com for region eu). It must be https.
	BaseURL string `yaml:"base_url"`
	// AllowHTTP lets BaseURL be plain http: for tests against a local fake
	// only, so it cannot be set from YAML.
	AllowHTTP bool `yaml:"-"`

	// Source is PagerDuty's payload.source and Opsgenie's source (default
	// "signoff"; use the deployment's name when several page one service).
	Source string `yaml:"source"`
	// Severity is the default severity (default error; Opsgenie priority
	// P2). A [Page] may override it.
	Severity Severity `yaml:"severity"`
	// DedupPrefix starts every incident key (default "signoff"); set it
	// per deployment when two Signoff installations page the same
	// service, so their request ids cannot meet.
	DedupPrefix string `yaml:"dedup_prefix"`

	// Timeout bounds one HTTP attempt (default 10s).
	Timeout time.Duration `yaml:"timeout"`
	// MaxAttempts bounds the requests of one call, the first included
	// (default 5); the caller's ctx bounds them too.
	MaxAttempts int `yaml:"max_attempts"`
	// MinBackoff and MaxBackoff bound the exponential backoff between
	// attempts (defaults 500ms and 30s); each wait is drawn at random up to
	// the bound ("full jitter"), so replicas retrying together spread out.
	MinBackoff time.Duration `yaml:"min_backoff"`
	MaxBackoff time.Duration `yaml:"max_backoff"`
	// MaxRetryAfter is the longest Retry-After a call waits out (default
	// 2m); a longer one ends the call with [ErrRateLimited].
	MaxRetryAfter time.Duration `yaml:"max_retry_after"`

	// HTTPClient sends the requests (default: a client with
	// [Config.Timeout] per attempt and no redirects).
	HTTPClient *http.Client `yaml:"-"`
	// Logger receives retries and outcomes (default slog.Default()).
	Logger *slog.Logger `yaml:"-"`
}

func (c *Config) setDefaults() {
	if c.Source == "" {
		c.Source = DefaultSource
	}
	if c.Severity == "" {
		c.Severity = DefaultSeverity
	}
	if c.DedupPrefix == "" {
		c.DedupPrefix = DefaultDedupPrefix
	}
	if c.BaseURL == "" {
		switch {
		case c.Kind == KindPagerDuty:
			c.BaseURL = DefaultPagerDutyURL
		case c.Kind == KindOpsgenie && strings.EqualFold(c.Region, "eu"):
			c.BaseURL = DefaultOpsgenieEUURL
		case c.Kind == KindOpsgenie:
			c.BaseURL = DefaultOpsgenieURL
		}
	}
	if c.Kind == KindOpsgenie && c.Region == "" {
		c.Region = "us"
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.MinBackoff == 0 {
		c.MinBackoff = DefaultMinBackoff
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.MaxRetryAfter == 0 {
		c.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate checks a config after defaults; every problem is named with the
// pager and the field.
func (c *Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: pager %q: %s", ErrInvalidConfig, c.Name, fmt.Sprintf(format, args...))
	}
	if c.Name == "" {
		return fmt.Errorf("%w: a pager has no name", ErrInvalidConfig)
	}
	one := func(file, env, fileKey, envKey string) error {
		switch {
		case file != "" && env != "":
			return bad("set %s or %s, not both", fileKey, envKey)
		case file == "" && env == "":
			return bad("%s or %s is required", fileKey, envKey)
		}
		return nil
	}
	switch c.Kind {
	case KindPagerDuty:
		if err := one(c.RoutingKeyFile, c.RoutingKeyEnv, "routing_key_file", "routing_key_env"); err != nil {
			return err
		}
		for _, o := range []struct {
			key string
			set bool
		}{{"api_key_file", c.APIKeyFile != ""}, {"api_key_env", c.APIKeyEnv != ""}, {"region", c.Region != ""},
			{"responders", len(c.Responders) > 0}, {"tags", len(c.Tags) > 0}} {
			if o.set {
				return bad("%s is an opsgenie setting; this pager is kind pagerduty", o.key)
			}
		}
	case KindOpsgenie:
		if err := one(c.APIKeyFile, c.APIKeyEnv, "api_key_file", "api_key_env"); err != nil {
			return err
		}
		if c.RoutingKeyFile != "" || c.RoutingKeyEnv != "" {
			return bad("routing_key_file/routing_key_env are pagerduty settings; this pager is kind opsgenie")
		}
		if r := strings.ToLower(c.Region); r != "us" && r != "eu" {
			return bad("region %q is not us or eu", c.Region)
		}
		if len(c.Tags) > ogMaxTags {
			return bad("tags: %d tags, Opsgenie allows %d", len(c.Tags), ogMaxTags)
		}
		for _, t := range c.Tags {
			if t == "" || len([]rune(t)) > ogMaxTagChars {
				return bad("tags: %q must be 1 to %d characters", t, ogMaxTagChars)
			}
		}
		for _, r := range c.Responders {
			if _, err := parseResponder(r); err != nil {
				return bad("responders: %v", err)
			}
		}
	case "":
		return bad("kind is required (pagerduty or opsgenie)")
	default:
		return bad("kind %q is not pagerduty or opsgenie", c.Kind)
	}
	u, err := url.Parse(c.BaseURL)
	switch {
	case err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "":
		return bad("base_url %q must be a scheme and host only", c.BaseURL)
	case u.Scheme == "http" && !c.AllowHTTP:
		return bad("base_url %q must be https (the key travels in every request)", c.BaseURL)
	case u.Scheme != "https" && u.Scheme != "http":
		return bad("base_url %q must be https", c.BaseURL)
	}
	if !c.Severity.valid() {
		return bad("severity %q is not one of critical, error, warning, info", c.Severity)
	}
	if n := len([]rune(c.Source)); n > ogMaxSource {
		return bad("source is %d characters; at most %d", n, ogMaxSource)
	}
	for _, ch := range c.DedupPrefix {
		if !(ch == '-' || ch == '_' || ch == ':' || (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
			return bad("dedup_prefix %q may hold only letters, digits, '-', '_' and ':'", c.DedupPrefix)
		}
	}
	if len(c.DedupPrefix) > 64 {
		return bad("dedup_prefix is longer than 64 characters")
	}
	switch {
	case c.Timeout < 0 || c.MinBackoff < 0 || c.MaxBackoff < 0 || c.MaxRetryAfter < 0:
		return bad("timeout, min_backoff, max_backoff and max_retry_after must not be negative")
	case c.MaxAttempts < 1 || c.MaxAttempts > 20:
		return bad("max_attempts %d must be 1 to 20", c.MaxAttempts)
	case c.MinBackoff > c.MaxBackoff:
		return bad("min_backoff %v is above max_backoff %v", c.MinBackoff, c.MaxBackoff)
	}
	return nil
}

// New builds the pager a config describes: it applies defaults, validates,
// and reads the key from its file or variable (so a missing key fails at
// start, not at 3 a.m.). To rotate a key, restart or rebuild the pager.
func New(c Config) (Pager, error) {
	c.setDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	cl := newClient(&c)
	switch c.Kind {
	case KindPagerDuty:
		key, err := loadSecret(fmt.Sprintf("pager %q: routing key", c.Name), c.RoutingKeyFile, c.RoutingKeyEnv)
		if err != nil {
			return nil, err
		}
		if len(key) != pdRoutingKeyLen {
			return nil, fmt.Errorf("%w: pager %q: routing key is %d characters; a PagerDuty Events API v2 integration key has %d",
				ErrInvalidConfig, c.Name, len(key), pdRoutingKeyLen)
		}
		cl.key = key
		return &pagerDuty{client: cl}, nil
	default:
		key, err := loadSecret(fmt.Sprintf("pager %q: API key", c.Name), c.APIKeyFile, c.APIKeyEnv)
		if err != nil {
			return nil, err
		}
		cl.key = key
		og := &opsgenie{client: cl}
		for _, r := range c.Responders {
			rr, _ := parseResponder(r)
			og.responders = append(og.responders, rr)
		}
		og.tags = c.Tags
		return og, nil
	}
}

// NewSet builds every pager of a `pagers:` map; the map keys are the names.
// logger applies to every pager without its own (nil: slog.Default()).
// Pagers are built in name order, so the first error is the same each run.
func NewSet(cfgs map[string]Config, logger *slog.Logger) (map[string]Pager, error) {
	out := make(map[string]Pager, len(cfgs))
	for _, name := range slices.Sorted(maps.Keys(cfgs)) {
		c := cfgs[name]
		c.Name = name
		if c.Logger == nil {
			c.Logger = logger
		}
		p, err := New(c)
		if err != nil {
			return nil, err
		}
		out[name] = p
	}
	return out, nil
}

// Check validates c as [New] would (defaults applied first) without reading
// its key: for a policy loader that must reject a bad pager entry before
// anything is built.
func (c Config) Check() error {
	c.setDefaults()
	return c.Validate()
}
