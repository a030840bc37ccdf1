// Package globs matches the strings a shell word can stand for against
// rule patterns.
//
// A [Glob] describes a word whose value is not known when the command is
// judged ($f, .e*, "$(cmd)", ~user) as a sequence of tokens: literal
// runes, single characters of a set, and runs. [Intersects] decides
// whether some string could match both of two globs (a deny or ask rule
// matches when it could), [Covers] whether every string of one matches
// the other (an allow rule matches only then). [Match] and [Check] match
// and validate the shell patterns of rules (`git diff *`), and
// [ExpandHome] and [CleanPath] prepare paths the way the engine cleans
// values.
//
// It is kept apart from the shell analysis as mvdan.cc/sh keeps pattern
// apart from syntax: package shell builds globs, package policy matches
// them against its rules.
package globs
