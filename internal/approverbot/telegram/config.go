package telegram

import (
	"errors"
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
