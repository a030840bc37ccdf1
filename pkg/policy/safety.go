package policy

import (
	"strings"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// criticalWritePaths are files whose modification hands over the machine:
// a write-tier tool (or a shell redirection) touching one of them forces a
// question with a safety-override reason, whatever the rules say (except in
// yolo mode; an explicit deny still denies). The shell analysis reports the
// critical command patterns (rm -rf /, fork bombs, curl | sh, mkfs, dd
// of=/dev/…, shutdown) in shell.Analysis.Safety.
var criticalWritePaths = map[string]string{
	"/etc/passwd":  "write to /etc/passwd (user accounts)",
	"/etc/shadow":  "write to /etc/shadow (password hashes)",
	"/etc/gshadow": "write to /etc/gshadow (group password hashes)",
	"/etc/group":   "write to /etc/group (group membership)",
	"/etc/sudoers": "write to /etc/sudoers (root privileges)",
}

// pathSafety returns the safety-override reason for a write of the cleaned
// absolute path p, or "".
func pathSafety(p string) string {
	// In any case: a case-insensitive file system writes /etc/passwd for
	// /ETC/PASSWD.
	lp := globs.Fold(p)
	if r, ok := criticalWritePaths[lp]; ok {
		return r
	}
	if strings.HasPrefix(lp, "/etc/sudoers.d/") {
		return "write to " + p + " (root privileges)"
	}
	return ""
}
