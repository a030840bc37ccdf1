package shell

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestShellCacheMemoryIsBounded fills a program table's cache with scripts an
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
		p := &Programs{byName: BuiltinPrograms().byName, shells: newShellCache()}
		calls := make([]string, entries)
		for i := range calls {
			calls[i] = script(i)
		}
		before := heap()
		for _, c := range calls {
			AnalyzeWith(c, p)
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
