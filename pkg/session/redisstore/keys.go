package redisstore

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/pkg/session"
)

// dueShards is the number of keys the due index is spread over. Each is a
// small sorted set in its own hash slot, so on Redis Cluster the reapers'
// work spreads over the nodes and no single key gets every write.
const dueShards = 16

// keys builds the key names of one store; see docs/STATE.md for the
// layout. Keys of one session share the hash tag {<session>}; keys of an
// agent or a team carry theirs.
type keys struct {
	prefix string // "signoff"
}

// Session keys: prefix:{<session>}:…
func (k keys) session(sess string) string      { return k.prefix + ":{" + sess + "}" }
func (k keys) record(sess, id string) string   { return k.session(sess) + ":r:" + id }
func (k keys) recordPrefix(sess string) string { return k.session(sess) + ":r:" }
func (k keys) expiry(sess string) string       { return k.session(sess) + ":exp" }
func (k keys) stop(sess string) string         { return k.session(sess) + ":stop" }
func (k keys) outbox(sess string) string       { return k.session(sess) + ":ob" }
func (k keys) escalation(sess string) string   { return k.session(sess) + ":esc" }
func (k keys) sessionGrants(sess string) string {
	return k.session(sess) + ":grants"
}

// sessionGrantIndex is the hash of the session's grants by bucket (the
// grant index); sessionGrants is the single-string list it replaced, read
// and migrated until it is gone.
func (k keys) sessionGrantIndex(sess string) string { return k.sessionGrants(sess) + ":b" }

// Agent and team keys: prefix:agent:{<agent>}:…, prefix:team:{<team>}:….
// The indexes name sessions, not requests: a session with ten questions for
// a team costs the team's index one member.
func (k keys) agentGrants(agent string) string { return k.prefix + ":agent:{" + agent + "}:grants" }

// agentGrantIndex is the hash of the agent's grants by bucket; see
// sessionGrantIndex.
func (k keys) agentGrantIndex(agent string) string { return k.agentGrants(agent) + ":b" }
func (k keys) agentIndex(agent string) string      { return k.prefix + ":agent:{" + agent + "}:sessions" }
func (k keys) teamIndex(team string) string        { return k.prefix + ":team:{" + team + "}:sessions" }

// teamGrants is the set of grant lists ("s:<session>", "a:<agent>") that
// hold grants approved for team.
func (k keys) teamGrants(team string) string { return k.prefix + ":team:{" + team + "}:grants" }

// due returns the due-index shard of a session.
func (k keys) due(sess string) string { return k.dueShard(shardOf(sess)) }

func (k keys) dueShard(n int) string { return k.prefix + ":due:{" + strconv.Itoa(n) + "}" }

// obx returns the outbox-index shard of a session: the sessions whose
// outbox may hold entries, scored by when a worker must look (µs). The
// same sharding as the due index.
func (k keys) obx(sess string) string { return k.obxShard(shardOf(sess)) }

func (k keys) obxShard(n int) string { return k.prefix + ":obx:{" + strconv.Itoa(n) + "}" }

// escx returns the escalation-index shard of a session: the sessions
// whose escalation steps may be due, scored by when a worker must look
// (µs). The same sharding as the due index.
func (k keys) escx(sess string) string { return k.escxShard(shardOf(sess)) }

func (k keys) escxShard(n int) string { return k.prefix + ":escx:{" + strconv.Itoa(n) + "}" }

func shardOf(sess string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(sess))
	return int(h.Sum32() % dueShards)
}

// checkTag returns an error wrapping session.ErrInvalid when name, put
// between braces after a key prefix, would not make a sound hash tag: a
// '}' in it would end the tag early, so that the keys of two names could
// collide ("a}:r:b" + "}:r:c" against "a" + "}:r:b}:r:c") and a name
// starting with '}' would make the tag empty. Without '}', the first '}'
// of a key ends the name, which makes every key name unambiguous.
func checkTag(what, name string) error {
	if strings.Contains(name, "}") {
		return fmt.Errorf("%w: %s %q contains '}', which the Redis store cannot use in a hash tag", session.ErrInvalid, what, name)
	}
	return nil
}

// indexSlack is how long past its score a session stays in an agent or
// team index: the score is computed on the index's node, whose clock may
// differ a little from the session's on Redis Cluster.
const indexSlack = 1_000_000 // µs

// agentGrantMember encodes an agent grant as an entry of the agent's grant
// list: the tool length-prefixed, then the pattern.
func agentGrantMember(tool, pattern string) string {
	return strconv.Itoa(len(tool)) + ":" + tool + pattern
}

func parseAgentGrantMember(m string) (tool, pattern string, ok bool) {
	i := strings.IndexByte(m, ':')
	if i < 0 {
		return "", "", false
	}
	n, err := strconv.Atoi(m[:i])
	if err != nil || n < 0 || i+1+n > len(m) {
		return "", "", false
	}
	return m[i+1 : i+1+n], m[i+1+n:], true
}
