package policy

import (
	"encoding/json"
	"testing"
)

// TestKernelPath holds kernelPath to the kernel's walk of a path: links
// first, then "..", from the link's target; a ".." from outside the
// trusted directories (here a working directory and the home) is opaque.
func TestKernelPath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		opaque   bool
	}{
		{in: "/etc/hosts", want: "/etc/hosts"},
		{in: "/home/dev/a/../b", opaque: true}, // a may be a link (a workspace's node_modules/@s/pkg)
		{in: "/home/dev/proj/../b", want: "/home/dev/b"},
		{in: "/proc/self/root/etc/hosts", want: "/etc/hosts"},
		{in: "/proc/self/root/../etc/x", want: "/etc/x"},
		{in: "/proc/1234/task/1235/root/../../home/x", want: "/home/x"},
		{in: "/proc/thread-self/../../root/home/x", opaque: true},
		{in: "/proc/self/task/../root/etc/x", opaque: true},
		// A .. from outside the trusted directories may leave a link the
		// system made: /var/run is /run, /proc/net is /proc/self/net.
		{in: "/var/run/../home/dev/.aws/credentials", opaque: true},
		{in: "/proc/net/../cwd/../.aws/credentials", opaque: true},
		{in: "/home/dev/proj/../.aws/credentials", want: "/home/dev/.aws/credentials"},
		{in: "/home/dev/../dev/x", want: "/home/dev/x"},
		// The working directory's ancestors are real directories.
		{in: "/home/dev/proj/../../../etc/x", want: "/etc/x"},
		{in: "/proc/self/cwd", opaque: true},
		{in: "/proc/self/cwd/../.aws/credentials", opaque: true},
		{in: "/dev/fd/../cwd/../x", opaque: true},
		{in: "/dev/fd/3", want: "/proc/self/fd/3"},
		{in: "/dev/fd/3/id_rsa", opaque: true},
		{in: "/dev/fd/3/..", opaque: true},
		{in: "/dev/stdin", want: "/proc/self/fd/0"},
		{in: "/dev/stdin/../..", opaque: true},
		{in: "/proc/1/fd/0", opaque: true},
		{in: "/proc/self/map_files/x", opaque: true},
		{in: "/dev/null", want: "/dev/null"},
		{in: "/dev/../etc/x", opaque: true},
		{in: "/proc/cpuinfo", want: "/proc/cpuinfo"},
	} {
		got, opaque := kernelPath(tc.in, "/home/dev/proj", "/home/dev")
		if opaque != tc.opaque || !opaque && got != tc.want {
			t.Errorf("kernelPath(%q) = %q, opaque %v; want %q, opaque %v", tc.in, got, opaque, tc.want, tc.opaque)
		}
	}
}

// TestPlatformAliases holds the policy to macOS's other names for the
// directories rules name: a write of /private/etc/hosts is one of
// /etc/hosts, a read under /System/Volumes/Data one of the path after it.
func TestPlatformAliases(t *testing.T) {
	p := mustParse(t, `
mode: yolo
home: /Users/dev
rules:
  - { rule: "write_file(/etc/**)", action: deny }
  - { rule: "read_file(~/.aws/**)", action: deny }
`)
	for _, tc := range []struct{ tool, args string }{
		{"write_file", `{"path": "/private/etc/hosts"}`},
		{"bash", `{"command": "echo x > /private/etc/hosts"}`},
		{"read_file", `{"path": "/System/Volumes/Data/Users/dev/.aws/credentials"}`},
		{"bash", `{"command": "cat /System/Volumes/Data/Users/dev/.aws/credentials"}`},
	} {
		if d := p.Evaluate(Call{Tool: tc.tool, Arguments: json.RawMessage(tc.args), Cwd: "/Users/dev/proj"}); d.Action != Deny {
			t.Errorf("%s %s → %s (%s), want deny", tc.tool, tc.args, d.Action, d.Reason)
		}
	}
}
