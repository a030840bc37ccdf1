package redisstore

import (
	"embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// script is one Lua transition. Every script touches keys of a single hash
// slot: the keys it is given and keys built from ARGV that carry the same
// hash tag.
type script struct {
	name string
	*redis.Script
}

// Script flags (Redis 7 shebang). Declaring a shebang also makes Redis
// Cluster check that every key a script touches, declared or not, hashes to
// the slot of its declared keys.
const (
	// flagsDefault: refused while Redis is out of memory (maxmemory with
	// noeviction), like any write that grows the data set.
	flagsDefault = "#!lua"
	// flagsAllowOOM: the script settles, expires, reads or deletes, so it
	// must keep working when Redis is out of memory; otherwise pending
	// requests could neither be answered nor expire.
	flagsAllowOOM = "#!lua flags=allow-oom"
	// flagsReadOnly: the script never writes.
	flagsReadOnly = "#!lua flags=no-writes"
)

var (
	scriptCreate      = newScript("create", flagsDefault)
	scriptOpen        = newScript("open", flagsAllowOOM)
	scriptGrantAdd    = newScript("grant_add", flagsDefault)
	scriptMark        = newScript("mark", flagsAllowOOM)
	scriptIndexAdd    = newScript("index_add", flagsAllowOOM)
	scriptDecide      = newScript("decide", flagsAllowOOM)
	scriptSettle      = newScript("settle", flagsAllowOOM)
	scriptSettleMany  = newScript("settle_many", flagsAllowOOM)
	scriptStop        = newScript("stop", flagsAllowOOM)
	scriptNewTurn     = newScript("new_turn", flagsAllowOOM)
	scriptLease       = newScript("lease", flagsAllowOOM)
	scriptClaim       = newScript("claim", flagsAllowOOM)
	scriptFinalize    = newScript("finalize", flagsAllowOOM)
	scriptRevoke      = newScript("revoke", flagsAllowOOM)
	scriptGrantRevoke = newScript("grant_revoke", flagsAllowOOM)
	scriptGrantExpire = newScript("grant_expire", flagsAllowOOM)
	scriptRetract     = newScript("retract", flagsAllowOOM)
	scriptPending     = newScript("pending", flagsReadOnly)
	scriptCountDue    = newScript("count_due", flagsReadOnly)
	scriptNextDue     = newScript("next_due", flagsReadOnly)
	scriptIndexRead   = newScript("index_read", flagsReadOnly)
	scriptObMark      = newScript("ob_mark", flagsAllowOOM)
	scriptObLease     = newScript("ob_lease", flagsAllowOOM)
	scriptObClaim     = newScript("ob_claim", flagsAllowOOM)
	scriptObAck       = newScript("ob_ack", flagsAllowOOM)
	scriptEscClaim    = newScript("esc_claim", flagsAllowOOM)
	scriptEscFinish   = newScript("esc_finish", flagsAllowOOM)
	scriptEscTeam     = newScript("esc_team", flagsDefault)
	// scriptEscFinishWatch scans the session's steps: a session holds few.
	scriptEscFinishWatch = newScript("esc_finish_watch", flagsAllowOOM)
	scriptEscDone        = newScript("esc_done", flagsReadOnly)
	scriptBreakerHit     = newScript("breaker_hit", flagsDefault)
	scriptBreakerReset   = newScript("breaker_reset", flagsAllowOOM)
)

// scripts lists every script, for tests and for loading them up front.
var scripts = []*script{
	scriptCreate, scriptOpen, scriptGrantAdd, scriptMark, scriptIndexAdd,
	scriptDecide, scriptSettle, scriptSettleMany, scriptStop, scriptNewTurn, scriptLease,
	scriptClaim, scriptFinalize, scriptRevoke, scriptRetract, scriptPending,
	scriptCountDue, scriptNextDue, scriptIndexRead,
	scriptObMark, scriptObLease, scriptObClaim, scriptObAck,
	scriptEscClaim, scriptEscFinish, scriptEscTeam, scriptEscFinishWatch, scriptEscDone,
	scriptGrantRevoke, scriptGrantExpire, scriptBreakerHit, scriptBreakerReset,
}

func newScript(name, flags string) *script {
	prelude := mustRead("prelude.lua")
	body := mustRead(name + ".lua")
	var b strings.Builder
	b.WriteString(flags)
	b.WriteString("\n")
	b.WriteString(prelude)
	b.WriteString("\n")
	b.WriteString(body)
	return &script{name: name, Script: redis.NewScript(b.String())}
}

func mustRead(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name)
	if err != nil {
		panic("redisstore: missing embedded script " + name + ": " + err.Error())
	}
	return string(b)
}
