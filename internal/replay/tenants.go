package replay

import (
	"errors"
	"flag"
	"strings"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Tenants selects whose audit records a reader reads. The brokers of a
// tenant plane write a tenant's records on <prefix>.t.<ACCOUNT>.audit.>
// (docs/PROTOCOL.md "Tenants"), the plain tenant's on <prefix>.audit.>,
// all in one stream: the zero value reads the plain subjects only, Account
// one tenant's, All every tenant's and the plain ones.
type Tenants struct {
	// Account is the tenant's NATS account ("" = the plain subjects).
	Account string
	// All reads the plain subjects and every tenant's.
	All bool
}

// Bind adds --tenant and --all-tenants to fs.
func (s *Tenants) Bind(fs *flag.FlagSet) {
	fs.StringVar(&s.Account, "tenant", "", "read the audit records of this tenant `ACCOUNT` (its NATS account) instead of the plain subjects'")
	fs.BoolVar(&s.All, "all-tenants", false, "read every tenant's audit records and the plain subjects'")
}

// Validate checks the selection: the account is one subject token, and
// not given with All.
func (s Tenants) Validate() error {
	if s.All && s.Account != "" {
		return errors.New("--tenant and --all-tenants exclude each other")
	}
	if s.Account != "" {
		return messages.ValidateToken("--tenant", s.Account)
	}
	return nil
}

// Subjects are the audit subjects to read: every session's when session
// is "", else that session's.
func (s Tenants) Subjects(subj messages.Subjects, session string) []string {
	tail := ".audit.>"
	if session != "" {
		tail = ".audit." + session
	}
	plain := subj.Prefix + tail
	if subj.Prefix == "" {
		plain = messages.DefaultPrefix + tail
	}
	base := strings.TrimSuffix(plain, tail)
	switch {
	case s.Account != "":
		return []string{base + ".t." + s.Account + tail}
	case s.All:
		return []string{plain, base + ".t.*" + tail}
	}
	return []string{plain}
}

// TenantOf returns the tenant account of an audit subject as [Tenants]
// reads it ("" for a plain subject).
func TenantOf(subj messages.Subjects, subject string) string {
	prefix := subj.Prefix
	if prefix == "" {
		prefix = messages.DefaultPrefix
	}
	rest, ok := strings.CutPrefix(subject, prefix+".t.")
	if !ok {
		return ""
	}
	account, _, _ := strings.Cut(rest, ".")
	return account
}
