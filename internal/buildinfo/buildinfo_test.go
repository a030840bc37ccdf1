package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFormat(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0b4e50a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7"},
		{Key: "vcs.time", Value: "2026-11-28T02:20:26Z"}, {Key: "vcs.modified", Value: "false"}}
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"a released module", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}, Settings: vcs},
			"v1.4.0 (rev 0b4e50a1c2d3, 2026-11-28T02:20:26Z) go1.26.8"},
		{"a checkout with changes", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: append(vcs[:3:3], debug.BuildSetting{Key: "vcs.modified", Value: "true"})},
			"(devel) (rev 0b4e50a1c2d3, 2026-11-28T02:20:26Z, modified) go1.26.8"},
		{"go run: no version control information", debug.BuildInfo{GoVersion: "go1.26.8"}, "(devel) go1.26.8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := format(&tt.bi); got != tt.want {
				t.Errorf("format = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStringDescribesTheTestBinary(t *testing.T) {
	bi, _ := debug.ReadBuildInfo()
	if got := String(); got != format(bi) || got == "" {
		t.Fatalf("String() = %q", got)
	}
}
