package policy

import (
	"hash/maphash"
	"sync"
)

// The analysis of a script depends on nothing but its text and the program
// table (no working directory, no home, no clock), and agents run the same
// commands again and again (git status, ls, the project's test command), so
// each program table keeps the analyses of recent scripts. Parsing and
// walking a short command is most of what judging it costs (about a seventh
// of the broker's CPU on the automatic path; docs/BENCHMARKS.md, "Eighth
// sitting").
//
// The cache is bounded in entries and in the length of the scripts it keeps
// (a long heredoc is analysed every time), and evicts an arbitrary entry of
// a full shard: a stream of distinct scripts costs what it cost without the
// cache and cannot grow it. Entries are shared between goroutines, so an
// analysis is read-only once it is cached: callers that extend one
// (several scripts in one call) copy its slices first.
const (
	shellCacheShards     = 16
	shellCacheShardLimit = 128  // entries per shard: 2,048 in all
	shellCacheMaxScript  = 1024 // bytes; longer scripts are not kept
)

// shellCache maps a script to its analysis under one program table.
type shellCache struct {
	seed   maphash.Seed
	shards [shellCacheShards]shellCacheShard
}

type shellCacheShard struct {
	mu sync.Mutex
	m  map[string]ShellAnalysis
}

func newShellCache() *shellCache { return &shellCache{seed: maphash.MakeSeed()} }

// analyze returns the analysis of src, from the cache when it holds one.
func (c *shellCache) analyze(src string, analyze func(string) ShellAnalysis) ShellAnalysis {
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
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = make(map[string]ShellAnalysis, shellCacheShardLimit)
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
