package web

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

// Defaults of [OIDCConfig].
const (
	DefaultOIDCIDClaim      = "email"
	DefaultOIDCDisplayClaim = "name"
	DefaultOIDCGroupsClaim  = "groups"
)

// DefaultOIDCScopes are the scopes a sign-in asks for unless
// web.oidc.scopes says otherwise.
var DefaultOIDCScopes = []string{"openid", "profile", "email", "groups"}

// OIDCConfig is web.oidc: sign-in with an OpenID Connect provider
// (authorization code flow with PKCE). docs/APPROVERS.md shows it for Okta,
// Entra ID, Google and Dex.
type OIDCConfig struct {
	// Name is the provider's name on the sign-in button (default: the
	// issuer's host).
	Name string `yaml:"name"`
	// Issuer is the provider's issuer URL; its discovery document is
	// <issuer>/.well-known/openid-configuration.
	Issuer string `yaml:"issuer"`
	// ClientID and the client secret (inline, or better in a file) of the
	// bot's registration at the provider. A public client (PKCE only)
	// leaves the secret out.
	ClientID         string `yaml:"client_id"`
	ClientSecret     string `yaml:"client_secret"`
	ClientSecretFile string `yaml:"client_secret_file"`
	// RedirectURL is the callback registered at the provider:
	// https://<the page>/login/oidc/callback.
	RedirectURL string `yaml:"redirect_url"`
	// PostLogoutRedirectURL is where the provider's logout leads back to
	// (default: the page's /login, derived from RedirectURL); register it
	// at the provider too.
	PostLogoutRedirectURL string `yaml:"post_logout_redirect_url"`
	// Scopes asked for (default openid, profile, email, groups).
	Scopes []string `yaml:"scopes"`
	// IDClaim is the ID token claim that is the approver id (default
	// email; an email counts only when email_verified is true).
	IDClaim string `yaml:"id_claim"`
	// DisplayClaim is the claim shown as the approver's name (default
	// name; the id when absent).
	DisplayClaim string `yaml:"display_claim"`
	// GroupsClaim is the claim listing the person's groups (default
	// groups): a list of strings, or one string.
	GroupsClaim string `yaml:"groups_claim"`
	// Teams maps each of the bot's teams to the provider groups whose
	// members see and answer its questions here. The bot states a person's
	// groups that appear here in every answer it signs; the brokers admit
	// them by the policy's teams (a team's groups:), not by this map.
	Teams map[string][]string `yaml:"teams"`
	// MaxSession bounds a session; it also ends when the ID token expires
	// (default web.session_ttl).
	MaxSession time.Duration `yaml:"max_session"`

	secret string
}

// check sets the defaults and checks c against the bot's teams.
func (c *OIDCConfig) check(botTeams []string, sessionTTL time.Duration) error {
	if err := c.checkURLs(); err != nil {
		return err
	}
	if c.ClientID == "" {
		return errors.New("web.oidc.client_id: required")
	}
	if err := c.readSecret(); err != nil {
		return err
	}
	if len(c.Scopes) == 0 {
		c.Scopes = slices.Clone(DefaultOIDCScopes)
	}
	if !slices.Contains(c.Scopes, "openid") {
		return fmt.Errorf("web.oidc.scopes: must include openid, got %s", strings.Join(c.Scopes, " "))
	}
	c.IDClaim = cmp.Or(c.IDClaim, DefaultOIDCIDClaim)
	c.DisplayClaim = cmp.Or(c.DisplayClaim, DefaultOIDCDisplayClaim)
	c.GroupsClaim = cmp.Or(c.GroupsClaim, DefaultOIDCGroupsClaim)
	for team, groups := range c.Teams {
		if !slices.Contains(botTeams, team) {
			return fmt.Errorf("web.oidc.teams.%s: the bot does not serve team %s (teams: %s)", team, team, strings.Join(botTeams, ", "))
		}
		for i, g := range groups {
			if strings.TrimSpace(g) == "" || strings.ContainsFunc(g, isControl) {
				return fmt.Errorf("web.oidc.teams.%s[%d]: %q must be a non-empty group name without control characters", team, i, g)
			}
		}
	}
	switch {
	case c.MaxSession < 0:
		return fmt.Errorf("web.oidc.max_session: must be positive, got %s", c.MaxSession)
	case c.MaxSession == 0:
		c.MaxSession = sessionTTL
	}
	return nil
}

func (c *OIDCConfig) checkURLs() error {
	for _, f := range []struct{ key, v string }{{"issuer", c.Issuer}, {"redirect_url", c.RedirectURL},
		{"post_logout_redirect_url", c.PostLogoutRedirectURL}} {
		if f.v == "" && f.key == "post_logout_redirect_url" {
			continue
		}
		u, err := url.Parse(f.v)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("web.oidc.%s: want an absolute http(s) URL, got %q", f.key, f.v)
		}
	}
	u, _ := url.Parse(c.RedirectURL)
	if u.Path != oidcCallbackPath {
		return fmt.Errorf("web.oidc.redirect_url: the path must be %s (the bot serves the callback there), got %q", oidcCallbackPath, u.Path)
	}
	if c.PostLogoutRedirectURL == "" {
		c.PostLogoutRedirectURL = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/login"}).String()
	}
	return nil
}

func (c *OIDCConfig) readSecret() error {
	switch {
	case c.ClientSecret != "" && c.ClientSecretFile != "":
		return errors.New("web.oidc: set client_secret or client_secret_file, not both")
	case c.ClientSecretFile != "":
		b, err := os.ReadFile(c.ClientSecretFile)
		if err != nil {
			return fmt.Errorf("web.oidc.client_secret_file: %w", err)
		}
		c.secret = strings.TrimSpace(string(b))
		if c.secret == "" {
			return fmt.Errorf("web.oidc.client_secret_file: %s is empty", c.ClientSecretFile)
		}
	default:
		c.secret = c.ClientSecret
	}
	return nil
}

// label is the provider's name on the sign-in button.
func (c *OIDCConfig) label() string {
	if c.Name != "" {
		return c.Name
	}
	if u, err := url.Parse(c.Issuer); err == nil && u.Host != "" {
		return u.Host
	}
	return "your identity provider"
}

// mappedGroups returns every group c.Teams names.
func (c *OIDCConfig) mappedGroups() map[string]bool {
	out := map[string]bool{}
	for _, gs := range c.Teams {
		for _, g := range gs {
			out[g] = true
		}
	}
	return out
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) }
