package slack

import (
	"errors"
	"fmt"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

// Config is the slack section of the bot's config.
type Config struct {
	BotToken      string `yaml:"bot_token"`
	SigningSecret string `yaml:"signing_secret"`
	// APIURL is Slack's Web API base (default https://slack.com/api).
	APIURL string `yaml:"api_url"`
	// Channels maps teams to Slack channel ids.
	Channels map[string]string `yaml:"channels"`
	// WebURL is the approver web page (https://…): a question too long
	// for Slack offers a button that opens it there instead of Approve.
	// Optional; without it the message names the page in words.
	WebURL string `yaml:"web_url"`
}

// KeyUser is the approvers' key holding their Slack user id (U…).
const KeyUser = "slack"

func init() {
	approverbot.Register(approverbot.Kind{
		Name:         Name,
		Section:      func() any { return &Config{} },
		ApproverKeys: []approverbot.ApproverKey{{Key: KeyUser, User: true}},
		Check: func(c *approverbot.Config, s any) error {
			sc := s.(*Config)
			if sc.BotToken == "" || sc.SigningSecret == "" {
				return errors.New("slack: bot_token and signing_secret are required")
			}
			if err := approverbot.CheckWebURL(sc.WebURL); err != nil {
				return fmt.Errorf("slack: web_url: %w", err)
			}
			if sc.APIURL == "" {
				sc.APIURL = "https://slack.com/api"
			}
			return c.TeamsMapped("slack.channels", approverbot.Keys(sc.Channels))
		},
		New: func(e approverbot.Env) (approverbot.Channel, error) {
			return New(e.Config, Options{Logger: e.Logger})
		},
	})
}
