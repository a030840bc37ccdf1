package cmdflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// Exit statuses of a parse that stops the command.
const (
	// ExitHelp: --help printed the usage.
	ExitHelp = 0
	// ExitUsage: a flag is wrong; the flag package printed why.
	ExitUsage = 2
)

// Usage makes fs's usage print text (the synopsis, what the command does
// and a "Flags:" heading) and then the flags.
func Usage(fs *flag.FlagSet, text string) {
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), text)
		fs.PrintDefaults()
	}
}

// Parse parses args into fs. When the command is not to run, stop is set
// and code is the exit status: [ExitHelp] after --help, [ExitUsage] for a
// bad flag.
func Parse(fs *flag.FlagSet, args []string) (code int, stop bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitHelp, true
		}
		return ExitUsage, true
	}
	return 0, false
}

// NoArgs reports whether fs was left no positional argument. Otherwise it
// prints `prefix: unexpected argument "ARG"` on w, followed by hint in
// brackets when hint is not empty.
func NoArgs(fs *flag.FlagSet, w io.Writer, prefix, hint string) bool {
	if fs.NArg() == 0 {
		return true
	}
	if hint != "" {
		hint = " (" + hint + ")"
	}
	fmt.Fprintf(w, "%s: unexpected argument %q%s\n", prefix, fs.Arg(0), hint)
	return false
}
