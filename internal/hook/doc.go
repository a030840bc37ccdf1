// Package hook answers the tool-call hooks of agent hosts — Claude Code and
// Codex — with Signoff decisions: it reads one hook event as JSON, asks the
// broker over NATS (pkg/client) and writes the answer in the host's own
// output format and exit code.
//
// A hook that crashes or times out lets the call run in both hosts, so
// [Run] fails closed before they fail open: every error path denies, a
// decision that does not arrive before the deadline is a deny (and the
// pending request is cancelled), and a watchdog answers deny at the
// deadline even when something hangs. docs/AGENTS.md is the user's guide.
//
// Each event is a new process: what the agent heard of hard rejections is
// kept in a small state file per session (seen.go), so that a new turn
// ends a stop only when the agent heard of every rejection behind it.
package hook
