package web

import (
	"fmt"
	"net/netip"
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
	// TrustedProxies are the reverse proxies (addresses or CIDR ranges)
	// whose X-Forwarded-For names the client: sign-in limits per address
	// then count the client's address, not the proxy's. Empty: the peer's
	// address counts, and forwarding headers are ignored.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// WebAuthn is the relying party of step-up (passkeys and security
	// keys); without rp_id the page cannot approve step-up questions.
	WebAuthn WebAuthnConfig `yaml:"webauthn"`
	// OIDC, when set, signs approvers in with an OpenID Connect provider
	// (passwords keep working for the approvers that have one).
	OIDC *OIDCConfig `yaml:"oidc"`

	proxies []netip.Prefix
}

// WebAuthnConfig names the page as a WebAuthn relying party.
type WebAuthnConfig struct {
	// RPID is the relying party id: the page's host name
	// ("approvals.example.com"; "localhost" for local use). Credentials
	// are bound to it.
	RPID string `yaml:"rp_id"`
	// Origins are the page's origins ("https://approvals.example.com"):
	// an assertion made on another origin is refused.
	Origins []string `yaml:"origins"`
	// CredentialsFile keeps the registered authenticators across
	// restarts (JSON, written mode 0600 by replacing the file whole).
	// Empty: they live in memory and are lost when the bot restarts.
	CredentialsFile string `yaml:"credentials_file"`
	// UserVerification is what a key must prove of its user, at
	// registration and at every step-up: "preferred" (the default: a
	// security key without a PIN or biometric serves, on presence alone;
	// the evidence says whether the user was verified) or "required" (the
	// authenticator must verify its user — a PIN, a fingerprint, the
	// device's unlock — or the approval is refused).
	UserVerification string `yaml:"user_verification"`
	// FirstKey is what adding an approver's first key needs besides a
	// fresh sign-in: "verified" (the default: an OIDC sign-in, a sign-in
	// by the trusted proxy, or the one-time enrollment code an operator
	// issued, approvers.<id>.enroll_code_hash) or "any_sign_in" (a
	// password alone enrolls the second factor).
	FirstKey string `yaml:"first_key"`
}

// The values of web.webauthn.first_key.
const (
	FirstKeyVerified  = "verified"
	FirstKeyAnySignIn = "any_sign_in"
)

// trusts reports whether addr is one of the trusted proxies.
func (c *Config) trusts(addr string) bool {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range c.proxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// parseProxies reads TrustedProxies: addresses or CIDR ranges.
func (c *Config) parseProxies() error {
	c.proxies = nil
	for i, s := range c.TrustedProxies {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return fmt.Errorf("web: trusted_proxies[%d]: %q is neither an address nor a CIDR range", i, s)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		c.proxies = append(c.proxies, p.Masked())
	}
	return nil
}

// KeyPasswordHash is the approvers' key holding the bcrypt hash of their
// web password (`approver-bot hash-password`).
const KeyPasswordHash = "password_hash"

// KeyEnrollCodeHash is the approvers' key holding the bcrypt hash of a
// one-time code that lets them add their first security key after a
// password sign-in (`approver-bot enroll-code`).
const KeyEnrollCodeHash = "enroll_code_hash"

func init() {
	approverbot.Register(approverbot.Kind{
		Name:         Name,
		Section:      func() any { return &Config{} },
		ApproverKeys: []approverbot.ApproverKey{{Key: KeyPasswordHash}, {Key: KeyEnrollCodeHash}},
		Check: func(bot *approverbot.Config, s any) error {
			c := s.(*Config)
			if c.SessionTTL == 0 {
				c.SessionTTL = DefaultSessionTTL
			}
			if c.OIDC != nil {
				if err := c.OIDC.check(bot.Teams, c.SessionTTL); err != nil {
					return err
				}
			}
			return c.parseProxies()
		},
		New: func(e approverbot.Env) (approverbot.Channel, error) {
			return New(e.Config, Options{Logger: e.Logger.With("channel", Name)})
		},
	})
}
