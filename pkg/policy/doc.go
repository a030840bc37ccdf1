// Package policy decides whether a tool call is allowed, denied or needs a
// human (ask): tool tiers, modes, rule layers with last-match-wins, an
// agent-type layer whose deny is a veto, safety overrides, argument globs,
// and shell analysis with mvdan.cc/sh so that every sub-command of a script
// is judged on its own.
//
// A [Policy] is compiled from YAML by [Parse] or [Load] (or is the built-in
// dev policy of [Default]); it is immutable, and [Policy.Evaluate] is pure
// and safe for concurrent use. A [Watcher] keeps the policy of a file
// current and keeps the last good one when an edit is broken. [RunCheck]
// evaluates calls offline for `broker policy check`.
//
// Evaluation of one [Call]:
//
//  1. The tool's tier (read, write, exec, mcp) comes from the policy's
//     lists; unknown tools are exec.
//  2. The call is split into subjects: the tool name alone (MCP and
//     unknown tools), each path argument (path tools), the pattern and path
//     (glob, grep), or each simple command and write redirection of the
//     script (shell tools, via [shell.Analyze]).
//  3. Each subject goes through the agent-type layer alone (a deny there is
//     final), then through the agent and static rules merged, where the
//     last matching rule wins; when no rule matches the mode decides by
//     tier. Constructs that cannot be judged (unanalysable or elevated
//     commands, paths that escape the working directory, unreadable
//     arguments) make a subject at least ask.
//  4. The strictest verdict wins (deny > ask > allow), and a safety
//     override (rm -rf /, curl | sh, writes to /etc/passwd…) turns an allow
//     or ask into an ungrantable ask, except in yolo mode.
//
// docs/POLICY.md is the reference for the configuration file.
package policy
