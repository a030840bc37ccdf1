package pager

import (
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// Defaults of [Config]: the policy's ([policy.PagerSpec.WithDefaults]).
const (
	DefaultPagerDutyURL  = policy.DefaultPagerDutyURL
	DefaultOpsgenieURL   = policy.DefaultOpsgenieURL
	DefaultOpsgenieEUURL = policy.DefaultOpsgenieEUURL
	DefaultDedupPrefix   = policy.DefaultDedupPrefix
	DefaultSource        = policy.DefaultPagerSource
	DefaultSeverity      = policy.DefaultPagerSeverity
	DefaultTimeout       = policy.DefaultPagerTimeout
	DefaultMaxAttempts   = policy.DefaultMaxAttempts
	DefaultMinBackoff    = policy.DefaultMinBackoff
	DefaultMaxBackoff    = policy.DefaultMaxBackoff
	DefaultMaxRetryAfter = policy.DefaultMaxRetryAfter
)

// Config configures one pager: the settings a policy's `pagers:` entry
// states ([policy.PagerSpec], docs/PAGING.md, validated there) and what
// only a program sets.
type Config struct {
	policy.PagerSpec `yaml:",inline"`

	// HTTPClient sends the requests (default: a client with
	// [Config.Timeout] per attempt and no redirects).
	HTTPClient *http.Client `yaml:"-"`
	// Logger receives retries and outcomes (default slog.Default()).
	Logger *slog.Logger `yaml:"-"`
}

// FromSpec returns the config of a policy's pager entry.
func FromSpec(s policy.PagerSpec) Config { return Config{PagerSpec: s} }

func (c *Config) setDefaults() {
	c.PagerSpec = c.PagerSpec.WithDefaults()
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate checks a config after defaults; every problem is named with the
// pager and the field, and wraps [ErrInvalidConfig].
func (c *Config) Validate() error { return c.PagerSpec.Validate() }

// New builds the pager a config describes: it applies defaults, validates,
// and reads the key from its file or variable (so a missing key fails at
// start, not at 3 a.m.). To rotate a key, restart or rebuild the pager.
func New(c Config) (Pager, error) {
	c.setDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	cl, err := newClient(&c)
	if err != nil {
		return nil, err
	}
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
