// Package shell analyses a shell command string the way the policy judges
// it: [Analyze] parses it with mvdan.cc/sh and returns every simple
// command and redirection anywhere in the tree as a [Command], wrappers
// (env, sudo, timeout, xargs, find -exec, sh -c…) seen through, with the
// paths each reads and writes and what it runs, per the program table.
//
// The program table ([Programs], built in from programs.yaml and extended
// by a policy file's programs: section with [DecodePrograms]) says, for
// every program it knows, what its options and operands do: read, write,
// run a command, run code, change directory. A construct the analysis
// cannot judge from the text makes the command, or the whole script,
// unanalysable, and the policy never allows it.
//
// [AlwaysPatterns] and [PrefixCovered] derive and check the prefix grants
// ("git diff *") an approver may give for a command. Package policy turns
// an [Analysis] into a decision; docs/POLICY.md ("What the shell analysis
// guarantees") states what the analysis promises.
package shell
