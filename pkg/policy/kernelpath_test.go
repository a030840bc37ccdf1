package policy

import "testing"

// TestKernelPath holds kernelPath to the kernel's walk of a path: links
// first, then "..", from the link's target.
func TestKernelPath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		opaque   bool
	}{
		{in: "/etc/hosts", want: "/etc/hosts"},
		{in: "/home/dev/a/../b", want: "/home/dev/b"},
		{in: "/proc/self/root/etc/hosts", want: "/etc/hosts"},
		{in: "/proc/self/root/../etc/x", want: "/etc/x"},
		{in: "/proc/1234/task/1235/root/../../home/x", want: "/home/x"},
		{in: "/proc/thread-self/../../root/home/x", want: "/home/x"},
		{in: "/proc/self/task/../root/etc/x", want: "/etc/x"},
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
		{in: "/dev/../etc/x", want: "/etc/x"},
		{in: "/proc/cpuinfo", want: "/proc/cpuinfo"},
	} {
		got, opaque := kernelPath(tc.in)
		if opaque != tc.opaque || !opaque && got != tc.want {
			t.Errorf("kernelPath(%q) = %q, opaque %v; want %q, opaque %v", tc.in, got, opaque, tc.want, tc.opaque)
		}
	}
}
