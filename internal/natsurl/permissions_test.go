package natsurl_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/natsurl"
	"github.com/signoff-dev/signoff/internal/testenv"
)

// A user whose permissions do not cover the default reply inbox gets a
// timeout from a request, not an error: the hint names the setting that
// fixes it (README walk W5: "context deadline exceeded" alone).
func TestPermissionHintNamesTheInboxPrefix(t *testing.T) {
	s := testenv.NATS(t, func(o *server.Options) {
		o.Users = []*server.User{{Username: "agent", Password: "pw", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"req.>", "_INBOX.agent.>"}},
			Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.agent.>", "req.>"}},
		}}}
	})
	responder := s.Connect(t, nats.UserInfo("agent", "pw"), nats.CustomInboxPrefix("_INBOX.agent"), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if _, err := responder.Subscribe("req.x", func(m *nats.Msg) { _ = m.Respond([]byte("ok")) }); err != nil {
		t.Fatal(err)
	}
	_ = responder.Flush()

	good := s.Connect(t, nats.UserInfo("agent", "pw"), nats.CustomInboxPrefix("_INBOX.agent"))
	if _, err := good.Request("req.x", nil, 2*time.Second); err != nil {
		t.Fatalf("with the prefix: %v", err)
	}
	if h := natsurl.PermissionHint(good); h != "" {
		t.Errorf("a hint without a violation: %q", h)
	}
	bad := s.Connect(t, nats.UserInfo("agent", "pw"), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if _, err := bad.Request("req.x", nil, 500*time.Millisecond); err == nil {
		t.Fatal("a request without the prefix was answered")
	}
	if h := natsurl.PermissionHint(bad); !strings.Contains(h, "--nats-inbox-prefix") || !strings.Contains(h, "_INBOX") {
		t.Errorf("hint %q does not name the setting", h)
	}
	if natsurl.PermissionHint(nil) != "" {
		t.Error("a nil connection has a hint")
	}
}
