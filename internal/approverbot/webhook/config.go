package webhook

import (
	"errors"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

// Config is the webhook section of the bot's config.
type Config struct {
	// URL receives each question and resolution as a signed POST.
	URL string `yaml:"url"`
	// Secret signs outgoing bodies and verifies incoming responses
	// (HMAC-SHA256).
	Secret string `yaml:"secret"`
}

func init() {
	approverbot.Register(approverbot.Kind{
		Name:    Name,
		Section: func() any { return &Config{} },
		Check: func(_ *approverbot.Config, s any) error {
			if wc := s.(*Config); wc.URL == "" || len(wc.Secret) < 16 {
				return errors.New("webhook: url and a secret of at least 16 bytes are required")
			}
			return nil
		},
		New: func(e approverbot.Env) (approverbot.Channel, error) {
			return New(e.Config, Options{Logger: e.Logger})
		},
	})
}
