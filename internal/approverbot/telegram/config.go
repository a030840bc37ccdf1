package telegram

import (
	"errors"
	"fmt"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

// Config is the telegram section of the bot's config.
type Config struct {
	Token string `yaml:"token"`
	// APIURL is the Bot API base (default https://api.telegram.org).
	APIURL string `yaml:"api_url"`
	// Chats maps teams to Telegram chat ids.
	Chats       map[string]int64 `yaml:"chats"`
	PollTimeout time.Duration    `yaml:"poll_timeout"`
	// WebURL is the approver web page (https://…): a question too long
	// for Telegram offers a button that opens it there instead of
	// Approve. Optional; without it the message names the page in words.
	WebURL string `yaml:"web_url"`
}

// KeyUser is the approvers' key holding their Telegram user id.
const KeyUser = "telegram"

func init() {
	approverbot.Register(approverbot.Kind{
		Name:         Name,
		Section:      func() any { return &Config{} },
		ApproverKeys: []approverbot.ApproverKey{{Key: KeyUser, Int: true, User: true}},
		Check: func(c *approverbot.Config, s any) error {
			tc := s.(*Config)
			if tc.Token == "" {
				return errors.New("telegram: token is required")
			}
			if tc.APIURL == "" {
				tc.APIURL = "https://api.telegram.org"
			}
			if err := approverbot.CheckWebURL(tc.WebURL); err != nil {
				return fmt.Errorf("telegram: web_url: %w", err)
			}
			if tc.PollTimeout == 0 {
				tc.PollTimeout = 30 * time.Second
			}
			return c.TeamsMapped("telegram.chats", approverbot.Keys(tc.Chats))
		},
		New: func(e approverbot.Env) (approverbot.Channel, error) {
			return New(e.Config, Options{Logger: e.Logger})
		},
	})
}
