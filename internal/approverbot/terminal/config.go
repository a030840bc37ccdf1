package terminal

import (
	"fmt"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

// Config is the terminal section of the bot's config: the one operator who
// answers at this terminal.
type Config struct {
	Approver string `yaml:"approver"`
}

func init() {
	approverbot.Register(approverbot.Kind{
		Name:    Name,
		Section: func() any { return &Config{} },
		Check: func(c *approverbot.Config, s any) error {
			if op := s.(*Config).Approver; c.Approvers == nil || !hasApprover(c, op) {
				return fmt.Errorf("terminal.approver: %q is not in approvers (known: %s)", op, knownApprovers(c))
			}
			return nil
		},
		// The terminal's user is its configured operator.
		Recipient: func(_ *approverbot.Config, s any, _ string) (string, bool) {
			return s.(*Config).Approver, true
		},
		New: func(e approverbot.Env) (approverbot.Channel, error) {
			op := e.Section.(*Config).Approver
			return New(e.Stdin, e.Stdout, Options{Logger: e.Logger.With("channel", Name), Open: e.Config.OpenNATS(),
				Shows: func(q approverbot.Question) bool { return e.Config.Admits(op, q) }}), nil
		},
	})
}

func hasApprover(c *approverbot.Config, id string) bool {
	_, ok := c.Approvers[id]
	return ok && id != ""
}

func knownApprovers(c *approverbot.Config) string {
	ids := approverbot.Keys(c.Approvers)
	if len(ids) == 0 {
		return "none: add one under approvers"
	}
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += id
	}
	return s
}
