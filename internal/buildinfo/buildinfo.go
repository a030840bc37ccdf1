package buildinfo

import (
	"debug/buildinfo"
	"runtime/debug"
	"strings"
)

// String describes the running binary: "v1.4.0 (rev 0b4e50a1c2d3,
// 2026-11-28T02:20:26Z) go1.26.8". A build outside a module version (go
// build in a checkout) is "(devel)"; "modified" marks a build from a
// working tree with uncommitted changes; without VCS information (go run,
// -buildvcs=false) the revision part is left out.
func String() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(no build information)"
	}
	return format(bi)
}

func format(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	var b strings.Builder
	b.WriteString(v)
	if rev != "" {
		b.WriteString(" (rev " + rev[:min(12, len(rev))])
		if at != "" {
			b.WriteString(", " + at)
		}
		if modified {
			b.WriteString(", modified")
		}
		b.WriteString(")")
	}
	if bi.GoVersion != "" {
		b.WriteString(" " + bi.GoVersion)
	}
	return b.String()
}

// Of describes the Go binary at path as [String] describes the running
// one: what that binary's --version must print.
func Of(path string) (string, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", err
	}
	return format(bi), nil
}

// Version is the module version of this build alone ("(devel)" outside a
// module version, "unknown" without build information): what the gates
// send in their Signoff-Gate header.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	switch {
	case !ok:
		return "unknown"
	case bi.Main.Version == "":
		return "(devel)"
	}
	return bi.Main.Version
}
