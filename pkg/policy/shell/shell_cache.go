package shell

import (
	"hash/maphash"
	"sync"
	"unsafe"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// The analysis of a script depends on nothing but its text and the program
// table (no working directory, no home, no clock), and agents run the same
// commands again and again (git status, ls, the project's test command), so
// each program table keeps the analyses of recent scripts. Parsing and
// walking a short command is most of what judging it costs (about a seventh
// of the broker's CPU on the automatic path; docs/BENCHMARKS.md, "Eighth
// sitting").
//
// The cache is bounded in entries, in the length of the scripts it keeps (a
// long heredoc is analysed every time) and in the size of their analyses (a
// short script can expand to hundreds of sub-commands or glob patterns:
// 60 KiB of analysis from 1 KiB of `a;a;a…`), so it holds at most about
// 2,048 × (1 + 4) KiB; it evicts an arbitrary entry of a full shard. A
// stream of distinct scripts costs what it cost without the cache and
// cannot grow it. Entries are shared between goroutines, so an
// analysis is read-only once it is cached: callers that extend one
// (several scripts in one call) copy its slices first.
// CacheEntries is how many analyses a program table's cache holds at
// most; a policy analyses more distinct scripts than this at the cost of a
// parse each.
const CacheEntries = shellCacheShards * shellCacheShardLimit

const (
	shellCacheShards     = 16
	shellCacheShardLimit = 128  // entries per shard: 2,048 in all
	shellCacheMaxScript  = 1024 // bytes; longer scripts are not kept
	shellCacheMaxEntry   = 4096 // bytes of analysis (analysisSize); larger ones are not kept
)

// shellCache maps a script to its analysis under one program table.
type shellCache struct {
	seed   maphash.Seed
	shards [shellCacheShards]shellCacheShard
}

type shellCacheShard struct {
	mu sync.Mutex
	m  map[string]Analysis
}

func newShellCache() *shellCache { return &shellCache{seed: maphash.MakeSeed()} }

// analyze returns the analysis of src, from the cache when it holds one.
func (c *shellCache) analyze(src string, analyze func(string) Analysis) Analysis {
	if c == nil || len(src) > shellCacheMaxScript {
		return analyze(src)
	}
	sh := &c.shards[maphash.String(c.seed, src)%shellCacheShards]
	sh.mu.Lock()
	res, ok := sh.m[src]
	sh.mu.Unlock()
	if ok {
		return res
	}
	res = analyze(src)
	if analysisSize(&res) > shellCacheMaxEntry {
		return res
	}
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = make(map[string]Analysis, shellCacheShardLimit)
	}
	if len(sh.m) >= shellCacheShardLimit {
		for k := range sh.m { // Go's map iteration starts at a random entry
			delete(sh.m, k)
			break
		}
	}
	sh.m[src] = res
	sh.mu.Unlock()
	return res
}

// analysisSize estimates the memory an analysis holds, from above: every
// string counted as if it had its own bytes (most share the words arena),
// every slice at its capacity.
func analysisSize(a *Analysis) int {
	const strHdr, sliceHdr = int(unsafe.Sizeof("")), int(unsafe.Sizeof([]string(nil)))
	strs := func(ss []string) int {
		n := strHdr * cap(ss)
		for _, s := range ss {
			n += len(s)
		}
		return n
	}
	globs := func(gs []globs.Glob) int {
		n := sliceHdr * cap(gs)
		for _, g := range gs {
			n += int(unsafe.Sizeof(globs.Tok{})) * cap(g)
			for _, t := range g {
				n += len(t.Class)
			}
		}
		return n
	}
	n := len(a.Unanalysable) + len(a.Unprefixable) + strs(a.Safety) + int(unsafe.Sizeof(Command{}))*cap(a.Commands)
	for i := range a.Commands {
		c := &a.Commands[i]
		n += len(c.Name) + len(c.Unanalysable) + len(c.Target) + strs(c.Words) + strs(c.Wrappers) + strs(c.Reads) +
			globs(c.Globs) + globs(c.BaseGlobs) + globs(c.ReadGlobs)
	}
	return n
}
