package globs

import (
	"strings"
)

// ExpandHome replaces a leading "~", "$HOME" or "${HOME}" (alone or followed
// by '/') with home. It reports whether s had such a prefix; when home is
// empty s is returned unchanged.
func ExpandHome(s, home string) (string, bool) {
	for _, p := range [...]string{"~", "$HOME", "${HOME}"} {
		if !strings.HasPrefix(s, p) {
			continue
		}
		rest := s[len(p):]
		if rest != "" && rest[0] != '/' {
			continue // "~alice", "$HOMEDIR": not ours
		}
		if home == "" {
			return s, true
		}
		return home + rest, true
	}
	return s, false
}
