package approverbot

import (
	"context"
	"errors"
	"net/url"
	"time"
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

// Sleep waits d, or until ctx is done (then it returns ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
