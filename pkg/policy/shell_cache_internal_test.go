package policy

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestShellCacheMemoryIsBounded fills a policy's cache with scripts an
// agent could send on purpose: short ones that expand to hundreds of
// sub-commands, words or glob patterns (up to 60 KiB of analysis each,
// 120 MiB for a full cache before analyses were bounded), and long ones.
// Whatever the shape, the full cache must stay within its documented
// bound, about 2,048 × 5 KiB; the test allows 16 MiB.
func TestShellCacheMemoryIsBounded(t *testing.T) {
	entries := shellCacheShards * shellCacheShardLimit
	shapes := map[string]func(i int) string{
		"sub-commands": func(i int) string { return fmt.Sprintf("echo %d", i) + strings.Repeat(";a", 500) },
		"pipes":        func(i int) string { return fmt.Sprintf("cat %d", i) + strings.Repeat("|a>b", 250) },
		"words":        func(i int) string { return fmt.Sprintf("echo %d", i) + strings.Repeat(" a", 500) },
		"globs":        func(i int) string { return fmt.Sprintf("ls %d", i) + strings.Repeat(" $x*", 250) },
		"just cached":  func(i int) string { return fmt.Sprintf("ls %d", i) + strings.Repeat(" $x*", 18) },
		"long":         func(i int) string { return fmt.Sprintf("echo %d ", i) + strings.Repeat("x", 4000) },
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for name, script := range shapes {
		p, err := Parse([]byte("mode: auto-edit\n"), "bound.yaml")
		if err != nil {
			t.Fatal(err)
		}
		calls := make([]Call, entries)
		for i := range calls {
			args, err := json.Marshal(map[string]string{"command": script(i)})
			if err != nil {
				t.Fatal(err)
			}
			calls[i] = Call{Tool: "bash", Arguments: args}
		}
		before := heap()
		for _, c := range calls {
			p.Evaluate(c)
		}
		grown := int64(heap()) - int64(before)
		t.Logf("%s: the full cache holds %.1f MiB", name, float64(grown)/(1<<20))
		if grown > 16<<20 {
			t.Errorf("%s: %d scripts grew the heap by %.1f MiB, want at most 16", name, entries, float64(grown)/(1<<20))
		}
		runtime.KeepAlive(p)
		runtime.KeepAlive(calls)
	}
}
