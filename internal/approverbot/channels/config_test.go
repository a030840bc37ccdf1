package channels_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	_ "github.com/signoff-dev/signoff/internal/approverbot/channels"
	"github.com/signoff-dev/signoff/internal/approverbot/slack"
	"github.com/signoff-dev/signoff/internal/approverbot/telegram"
	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/approverbot/web"
	"github.com/signoff-dev/signoff/internal/approverbot/webhook"
)

func section[T any](t *testing.T, c *approverbot.Config, name string) T {
	t.Helper()
	s, ok := approverbot.SectionOf[T](c, name)
	if !ok {
		t.Fatalf("no %s section in %+v", name, c.Channels)
	}
	return s
}

func TestParseConfigFillsDefaults(t *testing.T) {
	c, err := approverbot.ParseConfig([]byte("approvers: {alice: {}}\nterminal: {approver: alice}\nweb: {}\ntelegram: {token: t, chats: {default: -100}}\nslack: {bot_token: x, signing_secret: y, channels: {default: C1}}\n"), "bot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"prefix", c.Prefix, "signoff.v1"},
		{"nats url", c.NATS.URL, "nats://127.0.0.1:4222"},
		{"nats name", c.NATS.Name, "signoff-approver-bot"},
		{"teams", strings.Join(c.Teams, ","), "default"},
		{"listen", c.HTTP.Listen, "127.0.0.1:8090"},
		{"web session ttl", section[*web.Config](t, c, web.Name).SessionTTL, 12 * time.Hour},
		{"slack api", section[*slack.Config](t, c, slack.Name).APIURL, "https://slack.com/api"},
		{"telegram api", section[*telegram.Config](t, c, telegram.Name).APIURL, "https://api.telegram.org"},
		{"telegram poll", section[*telegram.Config](t, c, telegram.Name).PollTimeout, 30 * time.Second},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestParseConfigKeepsWhatIsSet(t *testing.T) {
	c, err := approverbot.ParseConfig([]byte(`
nats: {url: "nats://n1:4222", name: bot-eu}
prefix: acme.v1
teams: [default, oncall]
http: {listen: ":9000"}
approvers:
  alice: {display: Alice, slack: U1, telegram: 42, password_hash: "$2a$10$abc"}
web: {trusted_header: X-Forwarded-User, session_ttl: 1h}
`), "bot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := c.Approvers["alice"]
	if c.NATS.URL != "nats://n1:4222" || c.NATS.Name != "bot-eu" || c.Prefix != "acme.v1" || len(c.Teams) != 2 ||
		c.HTTP.Listen != ":9000" || a.Display != "Alice" || a.Key(slack.KeyUser) != "U1" || a.Key(telegram.KeyUser) != "42" ||
		a.Key(web.KeyPasswordHash) != "$2a$10$abc" || section[*web.Config](t, c, web.Name).TrustedHeader != "X-Forwarded-User" ||
		section[*web.Config](t, c, web.Name).SessionTTL != time.Hour {
		t.Errorf("config not kept as written: %+v", c)
	}
}

func TestParseConfigRejectsBadConfigs(t *testing.T) {
	const terminal = "approvers: {alice: {}}\nterminal: {approver: alice}\n"
	tests := []struct {
		name string
		yaml string
		want string // in the error
	}{
		{"an unknown key", terminal + "colour: red\n", `bot.yaml:3: unknown key "colour" (known: approvers, http, nats, prefix, slack, teams, telegram, terminal, web, webhook)`},
		{"a misspelt channel key", "approvers: {alice: {}}\nterminal: {aprover: alice}\n", `bot.yaml:2: unknown key "aprover" in terminal (known: approver)`},
		{"a misspelt approver key", "approvers: {alice: {slak: U1}}\nterminal: {approver: alice}\n", `bot.yaml:1: unknown key "slak" in approvers.alice (known: display, enroll_code_hash, password_hash, slack, teams, telegram)`},
		{"no channel", "approvers: {alice: {}}\n", "no channel enabled"},
		{"a terminal operator who is not an approver", "approvers: {alice: {}}\nterminal: {approver: mallory}\n", `bot.yaml:2: terminal.approver: "mallory" is not in approvers (known: alice)`},
		{"a terminal without an operator", "approvers: {alice: {}}\nterminal: {}\n", `terminal.approver: "" is not in approvers`},
		{"a team that is not a subject token", terminal + "teams: [\"on call\"]\n", "teams[0]"},
		{"a team with a wildcard", terminal + "teams: [\"ops.*\"]\n", "teams[0]"},
		{"a bad prefix", terminal + "prefix: \"a..b\"\n", "prefix"},
		{"one Slack user for two approvers", "approvers: {alice: {slack: U1}, bob: {slack: U1}}\nterminal: {approver: alice}\n", "approvers.bob.slack: user U1 already maps to alice"},
		{"one Telegram user for two approvers", "approvers: {alice: {telegram: 7}, bob: {telegram: 7}}\nterminal: {approver: alice}\n", "approvers.bob.telegram: user 7 already maps to alice"},
		{"Slack without its secrets", terminal + "slack: {bot_token: x, channels: {default: C1}}\n", "slack: bot_token and signing_secret are required"},
		{"Slack without a channel for a team", terminal + "teams: [default, oncall]\nslack: {bot_token: x, signing_secret: y, channels: {default: C1}}\n", `slack.channels: no destination for team "oncall"`},
		{"Telegram without a token", terminal + "telegram: {chats: {default: 1}}\n", "telegram: token is required"},
		{"Telegram without a chat for a team", terminal + "telegram: {token: t}\n", `telegram.chats: no destination for team "default"`},
		{"a webhook with a short secret", terminal + "webhook: {url: \"https://h/x\", secret: short}\n", "secret of at least 16 bytes"},
		{"a webhook without a url", terminal + "webhook: {secret: 0123456789abcdef}\n", "webhook: url"},
		{"a value of the wrong type", "approvers: {alice: {telegram: abc}}\nterminal: {approver: alice}\n", `bot.yaml:1: approvers.alice.telegram: want an integer, got "abc"`},
		{"a duration that is not one", terminal + "web: {session_ttl: forever}\n", `bot.yaml:3: web.session_ttl: want a duration such as 30s or 12h, got "forever"`},
		{"a mapping where a string goes", terminal + "nats: {url: {host: x}}\n", `bot.yaml:3: nats.url: want a string, got a mapping`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := approverbot.ParseConfig([]byte(tt.yaml), "bot.yaml")
			if err == nil {
				t.Fatalf("ParseConfig accepted:\n%s", tt.yaml)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "bot.yaml:") {
				t.Errorf("error %q does not name the file and say %q", err, tt.want)
			}
		})
	}
}

func TestLoadConfigReadsAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.yaml")
	if err := os.WriteFile(path, []byte("approvers: {alice: {}}\nterminal: {approver: alice}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := approverbot.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if op := section[*terminal.Config](t, c, terminal.Name).Approver; op != "alice" {
		t.Errorf("terminal approver %q, want alice", op)
	}
	if _, err := approverbot.LoadConfig(filepath.Join(t.TempDir(), "missing.yaml")); !os.IsNotExist(err) {
		t.Errorf("LoadConfig of a missing file = %v, want a not-exist error", err)
	}
}

func TestTheTerminalExampleConfigIsValid(t *testing.T) {
	c, err := approverbot.LoadConfig(filepath.Join("..", "..", "..", "examples", "approver-bot", "terminal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Enabled(), ","); got != terminal.Name {
		t.Errorf("the terminal example enables %s, want the terminal only", got)
	}
}

func TestTheFullExampleOfTheDocsIsValid(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "APPROVERS.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "\n## Configuration\n")
	if !ok {
		t.Fatal("docs/APPROVERS.md has no Configuration section")
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	example, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("the Configuration section has no yaml example")
	}
	c, err := approverbot.ParseConfig([]byte(example), "docs/APPROVERS.md")
	if err != nil {
		t.Fatalf("the documented example does not parse: %v", err)
	}
	if got, want := strings.Join(c.Enabled(), ","), strings.Join([]string{slack.Name, telegram.Name, terminal.Name, web.Name, webhook.Name}, ","); got != want {
		t.Errorf("the full example enables %s, want every channel (%s)", got, want)
	}
	if a := c.Approvers["alice"]; a.Key(slack.KeyUser) == "" || a.Key(telegram.KeyUser) == "" || a.Key(web.KeyPasswordHash) == "" {
		t.Errorf("the example's alice does not map every channel: %+v", c.Approvers["alice"])
	}
}

// Every config the repository ships keeps loading: the examples and the
// compose file's bot config (the Kubernetes one is tested with its
// manifests in deploy/kubernetes).
func TestEveryShippedConfigLoads(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	files, err := filepath.Glob(filepath.Join(root, "examples", "approver-bot", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "deploy", "compose", "approver-bot.yaml"))
	if len(files) < 2 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if _, err := approverbot.LoadConfig(f); err != nil {
				t.Error(err)
			}
		})
	}
}
