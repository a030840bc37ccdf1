// Package channels builds the approver bot's built-in channels into a
// program: importing it registers the terminal, web, slack, telegram and
// webhook kinds with the approverbot core, so their config sections parse
// and [approverbot.Build] can create them.
//
//	import _ "github.com/signoff-dev/signoff/internal/approverbot/channels"
//
// A new channel is a package that calls [approverbot.Register] from init,
// and one import line here.
package channels

import (
	// The built-in channels register themselves.
	_ "github.com/signoff-dev/signoff/internal/approverbot/slack"
	_ "github.com/signoff-dev/signoff/internal/approverbot/telegram"
	_ "github.com/signoff-dev/signoff/internal/approverbot/terminal"
	_ "github.com/signoff-dev/signoff/internal/approverbot/web"
	_ "github.com/signoff-dev/signoff/internal/approverbot/webhook"
)
