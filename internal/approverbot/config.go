package approverbot

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Config is the approver bot's configuration file (docs/APPROVERS.md).
type Config struct {
	NATS   NATSConfig `yaml:"nats"`
	Prefix string     `yaml:"prefix"`
	// Teams are the teams whose questions this bot shows.
	Teams []string `yaml:"teams"`
	// Approvers maps approver ids (the ids the policy's teams list) to the
	// users that stand for them on each channel.
	Approvers map[string]ApproverConfig `yaml:"approvers"`
	// HTTP is the listener shared by the web page, the Slack interactions
	// endpoint, the webhook endpoint and /healthz.
	HTTP     HTTPConfig      `yaml:"http"`
	Terminal *TerminalConfig `yaml:"terminal"`
	Web      *WebConfig      `yaml:"web"`
	Slack    *SlackConfig    `yaml:"slack"`
	Telegram *TelegramConfig `yaml:"telegram"`
	Webhook  *WebhookConfig  `yaml:"webhook"`
}

// NATSConfig says how to reach the plane.
type NATSConfig struct {
	URL      string `yaml:"url"`
	Creds    string `yaml:"creds"`
	NKeySeed string `yaml:"nkey_seed"` // file with the bot's nkey seed; also signs responses
	User     string `yaml:"user"`
	Password string `yaml:"password"`
	CA       string `yaml:"ca"`
	Cert     string `yaml:"cert"`
	Key      string `yaml:"key"`
	Name     string `yaml:"name"`
	// InboxPrefix replaces "_INBOX" as the prefix of the bot's reply
	// subjects, so NATS permissions can let the bot read its own replies
	// only (deploy/nats gives approvers "_INBOX.approver.>": set
	// "_INBOX.approver").
	InboxPrefix string `yaml:"inbox_prefix"`
}

// ApproverConfig maps one approver's users on each channel.
type ApproverConfig struct {
	Display string `yaml:"display"`
	// Slack is the Slack user id (U…).
	Slack string `yaml:"slack"`
	// Telegram is the Telegram user id.
	Telegram int64 `yaml:"telegram"`
	// PasswordHash is the bcrypt hash of the web page password
	// (`approver-bot hash-password`); empty: no password login.
	PasswordHash string `yaml:"password_hash"`
}

// HTTPConfig configures the bot's HTTP listener.
type HTTPConfig struct {
	Listen string `yaml:"listen"` // default 127.0.0.1:8090
}

// TerminalConfig enables the terminal channel for one operator.
type TerminalConfig struct {
	Approver string `yaml:"approver"`
}

// WebConfig enables the web page.
type WebConfig struct {
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

// SlackConfig enables Slack.
type SlackConfig struct {
	BotToken      string `yaml:"bot_token"`
	SigningSecret string `yaml:"signing_secret"`
	// APIURL is Slack's Web API base (default https://slack.com/api).
	APIURL string `yaml:"api_url"`
	// Channels maps teams to Slack channel ids.
	Channels map[string]string `yaml:"channels"`
}

// TelegramConfig enables Telegram.
type TelegramConfig struct {
	Token string `yaml:"token"`
	// APIURL is the Bot API base (default https://api.telegram.org).
	APIURL string `yaml:"api_url"`
	// Chats maps teams to Telegram chat ids.
	Chats       map[string]int64 `yaml:"chats"`
	PollTimeout time.Duration    `yaml:"poll_timeout"`
}

// WebhookConfig enables the generic signed webhook.
type WebhookConfig struct {
	// URL receives each question and resolution as a signed POST.
	URL string `yaml:"url"`
	// Secret signs outgoing bodies and verifies incoming responses
	// (HMAC-SHA256).
	Secret string `yaml:"secret"`
}

// Approver is an approver identity resolved from a channel user.
type Approver struct {
	ID      string
	Display string
}

// LoadConfig reads and checks a config file.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(data, path)
}

// ParseConfig decodes and checks a config; unknown keys are errors.
func ParseConfig(data []byte, name string) (*Config, error) {
	var c Config
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: the config is empty (see docs/APPROVERS.md)", name)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c.setDefaults()
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &c, nil
}

func (c *Config) setDefaults() {
	if c.Prefix == "" {
		c.Prefix = messages.DefaultPrefix
	}
	if c.NATS.URL == "" {
		c.NATS.URL = "nats://127.0.0.1:4222"
	}
	if c.NATS.Name == "" {
		c.NATS.Name = "signoff-approver-bot"
	}
	if len(c.Teams) == 0 {
		c.Teams = []string{"default"}
	}
	if c.HTTP.Listen == "" {
		c.HTTP.Listen = "127.0.0.1:8090"
	}
	if c.Web != nil && c.Web.SessionTTL == 0 {
		c.Web.SessionTTL = 12 * time.Hour
	}
	if c.Slack != nil && c.Slack.APIURL == "" {
		c.Slack.APIURL = "https://slack.com/api"
	}
	if c.Telegram != nil {
		if c.Telegram.APIURL == "" {
			c.Telegram.APIURL = "https://api.telegram.org"
		}
		if c.Telegram.PollTimeout == 0 {
			c.Telegram.PollTimeout = 30 * time.Second
		}
	}
}

// Validate reports the first problem, naming the key.
func (c *Config) Validate() error {
	if _, err := messages.NewSubjects(c.Prefix); err != nil {
		return fmt.Errorf("prefix: %w", err)
	}
	if p := c.NATS.InboxPrefix; p != "" {
		if _, err := messages.NewSubjects(p); err != nil || strings.ContainsAny(p, "*>") {
			return fmt.Errorf("nats.inbox_prefix %q: want dot-separated subject tokens without wildcards", p)
		}
	}
	for i, t := range c.Teams {
		if err := messages.ValidateToken("teams["+strconv.Itoa(i)+"]", t); err != nil {
			return err
		}
	}
	slack, tg := map[string]string{}, map[int64]string{}
	for _, id := range sortedKeys(c.Approvers) {
		a := c.Approvers[id]
		if err := checkApproverID(id); err != nil {
			return fmt.Errorf("approvers: %w", err)
		}
		if a.Slack != "" {
			if other, dup := slack[a.Slack]; dup {
				return fmt.Errorf("approvers.%s.slack: Slack user %s already maps to %s", id, a.Slack, other)
			}
			slack[a.Slack] = id
		}
		if a.Telegram != 0 {
			if other, dup := tg[a.Telegram]; dup {
				return fmt.Errorf("approvers.%s.telegram: Telegram user %d already maps to %s", id, a.Telegram, other)
			}
			tg[a.Telegram] = id
		}
	}
	if c.Terminal == nil && c.Web == nil && c.Slack == nil && c.Telegram == nil && c.Webhook == nil {
		return errors.New("no channel enabled: configure at least one of terminal, web, slack, telegram, webhook")
	}
	if c.Terminal != nil {
		if _, ok := c.Approvers[c.Terminal.Approver]; !ok {
			return fmt.Errorf("terminal.approver: %q is not in approvers", c.Terminal.Approver)
		}
	}
	if c.Slack != nil {
		if c.Slack.BotToken == "" || c.Slack.SigningSecret == "" {
			return errors.New("slack: bot_token and signing_secret are required")
		}
		if err := c.teamsMapped("slack.channels", keys(c.Slack.Channels)); err != nil {
			return err
		}
	}
	if c.Telegram != nil {
		if c.Telegram.Token == "" {
			return errors.New("telegram: token is required")
		}
		if err := c.teamsMapped("telegram.chats", keys(c.Telegram.Chats)); err != nil {
			return err
		}
	}
	if c.Webhook != nil && (c.Webhook.URL == "" || len(c.Webhook.Secret) < 16) {
		return errors.New("webhook: url and a secret of at least 16 bytes are required")
	}
	return nil
}

// teamsMapped checks that every team of the bot has a destination.
func (c *Config) teamsMapped(key string, mapped []string) error {
	for _, t := range c.Teams {
		if !slices.Contains(mapped, t) {
			return fmt.Errorf("%s: no destination for team %q", key, t)
		}
	}
	return nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := keys(m)
	sort.Strings(out)
	return out
}

// checkApproverID refuses ids that could not be an approver id of the
// protocol (messages.Approver.ID): empty, over-long, with spaces or control
// characters.
func checkApproverID(id string) error {
	r := messages.Response{V: messages.Version, RequestID: "x", SessionID: "x", Approver: messages.Approver{ID: id}, Approved: true}
	if err := r.Validate(); err != nil {
		return fmt.Errorf("approver id %q: %w", id, err)
	}
	return nil
}
