package approverbot

import (
	"errors"
	"net/url"
)

// StripURL drops the URL from an HTTP client error: for the channels'
// services a URL may be a credential (Telegram's holds the bot token, a
// Slack response_url answers for 30 minutes, a webhook URL may carry a
// key), and errors end up in logs and on /readyz.
func StripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
