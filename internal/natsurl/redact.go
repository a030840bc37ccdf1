package natsurl

import (
	"net/url"
	"strings"
)

// Redact hides passwords and tokens in a comma-separated NATS server list.
// A user:password pair keeps the user name; a bare token (nats://tok@host)
// is replaced whole. Entries that do not parse as URLs are left as they are.
func Redact(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		if err != nil || u.User == nil {
			continue
		}
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
		} else {
			u.User = url.User("REDACTED") // a token
		}
		parts[i] = u.String()
	}
	return strings.Join(parts, ",")
}
