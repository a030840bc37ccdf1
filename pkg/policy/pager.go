package policy

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// ErrInvalidPager is wrapped by every [PagerSpec] validation error.
var ErrInvalidPager = errors.New("pager: invalid config")

// PagerKind names a paging vendor.
type PagerKind string

// The paging vendors.
const (
	PagerDuty      PagerKind = "pagerduty"
	PagerOpsgenie  PagerKind = "opsgenie"
	pagerKindsText           = "pagerduty or opsgenie"
)

// PagerSeverity is PagerDuty's severity scale; Opsgenie priorities map from
// it (critical P1, error P2, warning P3, info P4).
type PagerSeverity string

// The severities, most urgent first. PagerDuty services that derive urgency
// from severity treat critical and error as high urgency.
const (
	SeverityCritical PagerSeverity = "critical"
	SeverityError    PagerSeverity = "error"
	SeverityWarning  PagerSeverity = "warning"
	SeverityInfo     PagerSeverity = "info"
)

// Valid reports whether s is one of the four severities.
func (s PagerSeverity) Valid() bool {
	switch s {
	case SeverityCritical, SeverityError, SeverityWarning, SeverityInfo:
		return true
	}
	return false
}

// Defaults of [PagerSpec] (see [PagerSpec.WithDefaults]).
const (
	DefaultPagerDutyURL  = "https://events.pagerduty.com"
	DefaultOpsgenieURL   = "https://api.opsgenie.com"
	DefaultOpsgenieEUURL = "https://api.eu.opsgenie.com"
	DefaultDedupPrefix   = "signoff"
	DefaultPagerSource   = "signoff"
	DefaultPagerSeverity = SeverityError
	DefaultPagerTimeout  = 10 * time.Second
	DefaultMaxAttempts   = 5
	DefaultMinBackoff    = 500 * time.Millisecond
	DefaultMaxBackoff    = 30 * time.Second
	DefaultMaxRetryAfter = 2 * time.Minute
)

// Opsgenie's limits on what a pager entry may set (docs.opsgenie.com,
// "Alert API").
const (
	OpsgenieMaxSource   = 100
	OpsgenieMaxTags     = 20
	OpsgenieMaxTagChars = 50
)

// PagerSpec is one entry of the policy's `pagers:` map (docs/PAGING.md), as
// the policy states it: plain settings, no client and no key. The broker's
// escalator builds a pager from it (reading the key then). Fields that
// belong to the other vendor are errors, so a mistyped kind is caught.
type PagerSpec struct {
	// Name is the pager's name (the map key); it appears in logs, errors
	// and escalation steps (`page: <name>`).
	Name string `yaml:"-"`
	// Kind is "pagerduty" or "opsgenie". Required.
	Kind PagerKind `yaml:"kind"`

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
	// P2). A page may override it.
	Severity PagerSeverity `yaml:"severity"`
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
	// 2m); a longer one ends the call as rate limited.
	MaxRetryAfter time.Duration `yaml:"max_retry_after"`
}

// WithDefaults returns s with every unset setting at its default.
func (s PagerSpec) WithDefaults() PagerSpec {
	s.Source = cmp.Or(s.Source, DefaultPagerSource)
	s.Severity = cmp.Or(s.Severity, DefaultPagerSeverity)
	s.DedupPrefix = cmp.Or(s.DedupPrefix, DefaultDedupPrefix)
	if s.BaseURL == "" {
		switch {
		case s.Kind == PagerDuty:
			s.BaseURL = DefaultPagerDutyURL
		case s.Kind == PagerOpsgenie && strings.EqualFold(s.Region, "eu"):
			s.BaseURL = DefaultOpsgenieEUURL
		case s.Kind == PagerOpsgenie:
			s.BaseURL = DefaultOpsgenieURL
		}
	}
	if s.Kind == PagerOpsgenie {
		s.Region = cmp.Or(s.Region, "us")
	}
	s.Timeout = cmp.Or(s.Timeout, DefaultPagerTimeout)
	s.MaxAttempts = cmp.Or(s.MaxAttempts, DefaultMaxAttempts)
	s.MinBackoff = cmp.Or(s.MinBackoff, DefaultMinBackoff)
	s.MaxBackoff = cmp.Or(s.MaxBackoff, DefaultMaxBackoff)
	s.MaxRetryAfter = cmp.Or(s.MaxRetryAfter, DefaultMaxRetryAfter)
	return s
}

// Check validates s with its defaults applied, without reading its key:
// what a policy loader checks of each `pagers:` entry.
func (s PagerSpec) Check() error {
	return s.WithDefaults().Validate()
}

// Validate checks s as it stands (defaults already applied); every problem
// is named with the pager and the setting, and wraps [ErrInvalidPager].
func (s PagerSpec) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: pager %q: %s", ErrInvalidPager, s.Name, fmt.Sprintf(format, args...))
	}
	if s.Name == "" {
		return fmt.Errorf("%w: a pager has no name", ErrInvalidPager)
	}
	if err := s.validateVendor(bad); err != nil {
		return err
	}
	u, err := url.Parse(s.BaseURL)
	switch {
	case err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "":
		return bad("base_url %q must be a scheme and host only", s.BaseURL)
	case u.Scheme == "http" && !s.AllowHTTP:
		return bad("base_url %q must be https (the key travels in every request)", s.BaseURL)
	case u.Scheme != "https" && u.Scheme != "http":
		return bad("base_url %q must be https", s.BaseURL)
	}
	if !s.Severity.Valid() {
		return bad("severity %q is not one of critical, error, warning, info", s.Severity)
	}
	if n := len([]rune(s.Source)); n > OpsgenieMaxSource {
		return bad("source is %d characters; at most %d", n, OpsgenieMaxSource)
	}
	for _, ch := range s.DedupPrefix {
		if !(ch == '-' || ch == '_' || ch == ':' || (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
			return bad("dedup_prefix %q may hold only letters, digits, '-', '_' and ':'", s.DedupPrefix)
		}
	}
	if len(s.DedupPrefix) > 64 {
		return bad("dedup_prefix is longer than 64 characters")
	}
	switch {
	case s.Timeout < 0 || s.MinBackoff < 0 || s.MaxBackoff < 0 || s.MaxRetryAfter < 0:
		return bad("timeout, min_backoff, max_backoff and max_retry_after must not be negative")
	case s.MaxAttempts < 1 || s.MaxAttempts > 20:
		return bad("max_attempts %d must be 1 to 20", s.MaxAttempts)
	case s.MinBackoff > s.MaxBackoff:
		return bad("min_backoff %v is above max_backoff %v", s.MinBackoff, s.MaxBackoff)
	}
	return nil
}

// validateVendor checks the settings of s's kind, and that it sets none of
// the other vendor's.
func (s PagerSpec) validateVendor(bad func(string, ...any) error) error {
	one := func(file, env, fileKey, envKey string) error {
		switch {
		case file != "" && env != "":
			return bad("set %s or %s, not both", fileKey, envKey)
		case file == "" && env == "":
			return bad("%s or %s is required", fileKey, envKey)
		}
		return nil
	}
	switch s.Kind {
	case PagerDuty:
		if err := one(s.RoutingKeyFile, s.RoutingKeyEnv, "routing_key_file", "routing_key_env"); err != nil {
			return err
		}
		for _, o := range []struct {
			key string
			set bool
		}{{"api_key_file", s.APIKeyFile != ""}, {"api_key_env", s.APIKeyEnv != ""}, {"region", s.Region != ""},
			{"responders", len(s.Responders) > 0}, {"tags", len(s.Tags) > 0}} {
			if o.set {
				return bad("%s is an opsgenie setting; this pager is kind pagerduty", o.key)
			}
		}
	case PagerOpsgenie:
		if err := one(s.APIKeyFile, s.APIKeyEnv, "api_key_file", "api_key_env"); err != nil {
			return err
		}
		if s.RoutingKeyFile != "" || s.RoutingKeyEnv != "" {
			return bad("routing_key_file/routing_key_env are pagerduty settings; this pager is kind opsgenie")
		}
		if r := strings.ToLower(s.Region); r != "us" && r != "eu" {
			return bad("region %q is not us or eu", s.Region)
		}
		if len(s.Tags) > OpsgenieMaxTags {
			return bad("tags: %d tags, Opsgenie allows %d", len(s.Tags), OpsgenieMaxTags)
		}
		for _, t := range s.Tags {
			if t == "" || len([]rune(t)) > OpsgenieMaxTagChars {
				return bad("tags: %q must be 1 to %d characters", t, OpsgenieMaxTagChars)
			}
		}
		for _, r := range s.Responders {
			if _, _, err := ParseResponder(r); err != nil {
				return bad("responders: %v", err)
			}
		}
	case "":
		return bad("kind is required (%s)", pagerKindsText)
	default:
		return bad("kind %q is not %s", s.Kind, pagerKindsText)
	}
	return nil
}

// ParseResponder splits an Opsgenie responder, "team:<name>",
// "user:<username>", "escalation:<name>" or "schedule:<name>", into its
// type and name.
func ParseResponder(s string) (typ, name string, err error) {
	typ, name, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", "", fmt.Errorf("%q must be team:<name>, user:<username>, escalation:<name> or schedule:<name>", s)
	}
	switch typ {
	case "team", "escalation", "schedule", "user":
		return typ, name, nil
	}
	return "", "", fmt.Errorf("%q: responder type %q is not team, user, escalation or schedule", s, typ)
}
