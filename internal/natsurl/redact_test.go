package natsurl

import (
	"strings"
	"testing"
)

func TestRedactURLsHidesSecrets(t *testing.T) {
	got := Redact("nats://bot:s3cret@n1:4222,nats://tok3n@n2:4222,nats://n3:4222")
	if strings.Contains(got, "s3cret") || strings.Contains(got, "tok3n") || !strings.Contains(got, "n3:4222") || !strings.Contains(got, "bot:REDACTED@n1") {
		t.Errorf("Redact = %q", got)
	}
}
