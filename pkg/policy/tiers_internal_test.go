package policy

import (
	"slices"
	"testing"
)

// TestWriteTierToolsNameTheirPaths: the write tier runs without asking in
// auto-edit mode because its rules see the path written. A built-in
// write-tier tool that names no path (Gemini's save_memory appends to
// ~/.gemini/GEMINI.md, red team AA F5) would write where no rule looks:
// every one must be a path or patch tool.
func TestWriteTierToolsNameTheirPaths(t *testing.T) {
	for name, tier := range builtinTiers {
		if tier != TierWrite {
			continue
		}
		if !slices.Contains(builtinPathTools, name) && !slices.Contains(builtinPatchTools, name) {
			t.Errorf("write-tier tool %s is neither a path tool nor a patch tool: what it writes, no rule sees", name)
		}
	}
}
