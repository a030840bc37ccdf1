package shell

import (
	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// Command is one simple command found anywhere in a shell script, as the
// policy judges it: wrappers seen through, quotes removed.
type Command struct {
	// Words are the literal words of the command that actually runs, after
	// quote removal and after stripping wrappers (env, sudo, timeout, xargs,
	// find -exec…) and leading VAR=value assignments. Words[0] is the command
	// name as written (it may be path-qualified: "/bin/rm").
	Words []string
	// Text and ShortText are what CommandTexts returns for the command,
	// set when the analysis ends, so that a cached analysis is not
	// quoted again on every call; "" until then.
	Text, ShortText string
	// Name is the base name of Words[0] ("rm" for "/bin/rm").
	Name string
	// PathQualified is true when Words[0] contains a "/".
	PathQualified bool
	// Wrappers lists the wrappers that were seen through, outermost first.
	Wrappers []string
	// Elevated is true when sudo or doas wrapped the command.
	Elevated bool
	// Unanalysable is a non-empty reason when the command cannot be judged
	// from its text (eval, source, non-literal name, sh -c with a non-literal
	// script, a shell reading its script from stdin…). Such a command is
	// never allowed.
	Unanalysable string
	// Options is how many words after the name are global options of the
	// program (git -C DIR --no-pager: 3), per the program table; rules and
	// "Always" patterns also see the command without them.
	Options int
	// Reads are the paths the command reads through its operands and
	// options, per the program table (cat FILE, cp SRC DST, grep -f FILE),
	// as written (a word with an expansion in its source form).
	Reads []string
	// Inert is true when the program table knows every effect of the
	// command (its entry, or its sub-command's, is complete) and the
	// command neither writes, rewrites in place nor runs code by them
	// (cat, ls -la, git status). An "Always" answer grants an inert
	// command its arity prefix, any other command only exactly.
	Inert bool
	// RunsFiles is true when what the command does is in files it runs
	// rather than in its words: a program or sub-command the table marks
	// runs_code (make, npm test, go generate, cargo build), an interpreter,
	// or a program the table does not know (what it does is not known). A
	// grant of its exact text grants whatever those files hold when it
	// runs (red team AT F4).
	RunsFiles bool
	// Recursive is true when the command reads or writes whole trees under
	// the directories it names (grep -r, cp -r, find, rm -r); on a write
	// target, that the write covers the tree.
	Recursive bool
	// Walks is true when the program is unknown to the table: an operand
	// may be a directory it walks (ag x ~, a script given a directory), so
	// its reads meet the deny and ask rules anchored under them (~/.ssh/**
	// under ~), as a recursive read does; not the floating ones (**/.env,
	// which every directory may hold: eslint . would ask in every
	// project).
	Walks bool
	// CwdReads are the indices in Reads of the working directory an
	// unknown program may walk without naming it (ag PATTERN): a read,
	// not also a possible write as its operands are (every program would
	// write where it runs). Its places after a cd are not among them: a
	// directory the script chose (cd .git/hooks && cpio -i) is met by
	// the write rules. Not empty for every program the table does not
	// know.
	CwdReads []int
	// Repeats is true when the command may run more than once: it is in
	// the body of a loop or of a function (for i in 1 2; do cd ..; done
	// moves up twice).
	Repeats bool
	// Opaque is true on a write of a tree whose members the command does
	// not name (an archive extracted, a tree copied, a patch read from
	// its input): any path under it may be written.
	Opaque bool
	// Commit is true, with Opaque, when the members are the files of a
	// commit, the index or a stash that git writes (git checkout REV,
	// git pull, git clone): git writes them inside the work tree only,
	// through no link, and they are the repository's, not a file read
	// from elsewhere — so only the rules that judge writes alone
	// (@write(**/.claude/settings.json)) may name them, not the ones that
	// guard secrets from reading too (@files(**/.env)).
	Commit bool
	// Redirect is true for a write redirection (>, >>, >|, &>): Target is the
	// path written and Words is empty.
	Redirect bool
	Target   string
	// Read is true, with Redirect, for an input redirection (<, <>, <&file,
	// $(< file)): Target is the path read, judged by the read rules. <>
	// is recorded twice, as a read and as a write.
	Read bool
	// Fed is true, with Redirect, for a write of the paths a feeder
	// hands a command (sed -i {} under find -exec, xargs): Globs are
	// those paths, which the engine also checks against the workspace.
	Fed bool
	// FedAny is true, with Fed, when the path is computed (input the
	// analysis cannot see, a tree walked without a name filter it can
	// read): like ReadAny, it can spell any name and meets every rule;
	// otherwise the write is met anchored, as a read of a pattern is.
	FedAny bool

	// globs describe the strings the entry can stand for when it is not
	// one known value, one glob per alternative: for a command, its words
	// joined by spaces when a word is not a plain literal (an expansion, a
	// pattern, ~), with an alternative per combination of words that may
	// vanish; for a redirection, the paths its target may name before home
	// expansion and cleaning (a pattern, an expansion, a relative path
	// after a cd). baseGlobs parallel globs for the base-name form of a
	// path-qualified command. nil when the entry is one known value.
	Globs, BaseGlobs []globs.Glob
	// Shown, with Globs, are the words as CommandTexts shows them when
	// one of them does not read back as its Words entry: a literal word
	// the shell would take apart or expand (rm '~' "$x" is not rm ~ $x),
	// a pattern with quoted parts as written ("a b"*, not 'a b*'). nil
	// when every word reads back as it is.
	Shown []string
	// readGlobs parallel Reads: the paths a read operand that is not a
	// plain literal can name (a pattern, an expansion: cat .e*, cat $f),
	// nil for a literal one; nil when every read is literal.
	ReadGlobs []globs.Glob
	// ReadAny parallels Reads: true for an operand whose value the script
	// computes — a command substitution, a parameter expansion with an
	// operator (${f:-x}, ${a[0]}, ${!x}), a variable the script sets in a
	// way the analysis does not follow (read, printf -v, an array, f=$(…))
	// — which can be any path: met by the read rules as every string it
	// can spell, not by the anchored test of an agent's pattern (cat
	// "$(echo .env)" is a read of .env). nil when no read is one.
	ReadAny []bool
	// readVars parallels Reads while the script is analysed: the
	// variables an operand expands (finishReads).
	readVars [][]string
	// unknownCode marks a command that runs code the agent gave as a value
	// (bash -c "$CMD"): it stands for any command.
	UnknownCode bool
	// foreign marks a script for another shell (zsh -c), unanalysable
	// unless a rule names that shell.
	Foreign bool
}

// Analysis is the result of parsing one shell command string.
type Analysis struct {
	// Commands are every simple command and write redirection in the tree,
	// in source order.
	Commands []Command
	// Unanalysable is a non-empty reason when the script as a whole cannot be
	// judged (parse error, empty command, lone &…).
	Unanalysable string
	// Unprefixable is a non-empty reason when no prefix grant may approve the
	// script (command or process substitution, backticks, lone &, empty).
	Unprefixable string
	// Safety lists critical patterns found (rm -rf /, fork bomb,
	// fetch-then-execute, writes to /etc/passwd, mkfs, dd of=/dev/…,
	// shutdown/reboot), each a human reason.
	Safety []string
}
