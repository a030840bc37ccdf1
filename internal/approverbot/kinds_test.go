package approverbot

import (
	"errors"
	"fmt"
)

// The core's tests register kinds of their own: the core names no real
// channel, and its tests must not either. desk has one operator (like a
// terminal), chat maps integer user ids (like Telegram), im string ones
// (like Slack); an unregistered channel's users are approver ids.

type deskSection struct {
	Approver string `yaml:"approver"`
}

type chatSection struct {
	Token string           `yaml:"token"`
	Rooms map[string]int64 `yaml:"rooms"`
}

type imSection struct {
	Secret  string `yaml:"secret"`
	Verbose bool   `yaml:"verbose"`
}

func init() {
	Register(Kind{
		Name:    "desk",
		Section: func() any { return &deskSection{} },
		Check: func(c *Config, s any) error {
			if op := s.(*deskSection).Approver; c.Approvers[op].Keys == nil {
				return fmt.Errorf("desk.approver: %q is not in approvers", op)
			}
			return nil
		},
		Recipient: func(_ *Config, s any, _ string) (string, bool) { return s.(*deskSection).Approver, true },
		New:       func(Env) (Channel, error) { return newRecorder("desk"), nil },
	})
	Register(Kind{
		Name:         "chat",
		Section:      func() any { return &chatSection{} },
		ApproverKeys: []ApproverKey{{Key: "chat", Int: true, User: true}},
		Check: func(c *Config, s any) error {
			cs := s.(*chatSection)
			if cs.Token == "" {
				return errors.New("chat: token is required")
			}
			return c.TeamsMapped("chat.rooms", Keys(cs.Rooms))
		},
		New: func(Env) (Channel, error) { return newRecorder("chat"), nil },
	})
	Register(Kind{
		Name:         "im",
		Section:      func() any { return &imSection{} },
		ApproverKeys: []ApproverKey{{Key: "im", User: true}, {Key: "im_pin"}},
		New:          func(Env) (Channel, error) { return newRecorder("im"), nil },
	})
}
