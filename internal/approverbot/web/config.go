package web

import (
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

// Config is the web section of the bot's config.
type Config struct {
	// TrustedHeader, when set, takes the approver id from this request
	// header (set by an authenticating reverse proxy) instead of a password
	// login. Only use it when the bot is reachable through that proxy alone.
	TrustedHeader string `yaml:"trusted_header"`
	// InsecureCookies drops the Secure flag of the session cookie (plain
	// HTTP on localhost only).
	InsecureCookies bool `yaml:"insecure_cookies"`
	// SessionTTL bounds a login (default 12 h).
	SessionTTL time.Duration `yaml:"session_ttl"`
}

// KeyPasswordHash is the approvers' key holding the bcrypt hash of their
// web password (`approver-bot hash-password`).
const KeyPasswordHash = "password_hash"

func init() {
	approverbot.Register(approverbot.Kind{
		Name:         Name,
		Section:      func() any { return &Config{} },
		ApproverKeys: []approverbot.ApproverKey{{Key: KeyPasswordHash}},
		Check: func(_ *approverbot.Config, s any) error {
			if c := s.(*Config); c.SessionTTL == 0 {
				c.SessionTTL = DefaultSessionTTL
			}
			return nil
		},
		New: func(e approverbot.Env) (approverbot.Channel, error) {
			return New(e.Config, Options{Logger: e.Logger.With("channel", Name)})
		},
	})
}
