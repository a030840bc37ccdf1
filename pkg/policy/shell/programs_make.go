package shell

import (
	"strings"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// makeArgs judges the words GNU make reads as make code besides the
// project's makefiles: a makefile from standard input or a descriptor
// (make -f -, -f /dev/stdin, -f <(…): program text nobody sees), and the
// operands that assign a variable, which make parses as a makefile line
// (make 'X:=$(shell id)' runs id at start-up, even under -n; $(file <F)
// reads F). An assignment is understood only as NAME=VALUE with a plain
// name, the recursive operator and a value without '$'; any other
// operator (:=, ::=, :::=, +=, ?=, !=), a value with a reference, a
// special or make's own variable (.SHELLFLAGS, MAKEFILES, VPATH) and an
// operand that is not a literal (it may expand to one) ask, like --eval.
func (u *progUse) makeArgs(w []shWord) {
	for _, s := range u.seen {
		switch s.opt.name {
		case "-f", "--file", "--makefile":
			if s.value != nil {
				if r := makeFileReason(*s.value); r != "" {
					u.setAsk(r)
				}
			}
		}
	}
	prev := ""
	for i := 1; i < len(w); i++ {
		t := w[i]
		if r := makeOperandReason(t, prev); r != "" && u.isOperand(t) {
			u.setAsk(r)
		}
		prev = t.text
	}
}

// isOperand reports whether the scan took w for an operand.
func (u *progUse) isOperand(w shWord) bool {
	for _, o := range u.operands {
		if o.text == w.text && o.lit == w.lit {
			return true
		}
	}
	return false
}

// makeStdinFiles are the makefile names that are standard input or a
// descriptor the policy cannot see.
var makeStdinFiles = []string{"-", "/dev/stdin", "/dev/fd/*", "/proc/*/fd/*", "/dev/tty"}

// makeFileReason returns why make -f FILE asks, or "".
func makeFileReason(v shWord) string {
	if !v.lit {
		return "make -f takes the makefile " + shQuoteShort(v.text) + ", which the policy cannot place (a process substitution or a descriptor is a makefile nobody sees)"
	}
	for _, p := range makeStdinFiles {
		if globs.Match(p, v.text) {
			return "make -f " + v.text + " reads a makefile from standard input or a descriptor: program text the policy cannot see"
		}
	}
	return ""
}

// makeValueOptions are make's options whose optional value may be the
// next word (make -j 4): that word is not an assignment.
var makeValueOptions = map[string]bool{"-j": true, "--jobs": true, "-l": true, "--load-average": true,
	"--max-load": true}

// anyAssignment is the glob of the words that hold '='.
var anyAssignment = globs.Glob{globs.AnyRun, {R: '='}, globs.AnyRun}

// makeOperandReason returns why a make operand asks as make code, or "".
// prev is the word before it.
func makeOperandReason(t shWord, prev string) string {
	if !t.lit {
		if makeValueOptions[prev] || t.g != nil && !globs.Intersects(t.g, anyAssignment) {
			return ""
		}
		return "make reads the operand " + shQuoteShort(t.text) + " as a variable assignment when it holds '=', which is make code the policy cannot read"
	}
	name, value, ok := strings.Cut(t.text, "=")
	if !ok {
		return ""
	}
	name = strings.TrimSpace(name)
	switch {
	case name == "" || strings.ContainsAny(name[len(name)-1:], ":+?!"):
		return "make " + shQuoteShort(t.text) + " assigns with an operator that expands or runs its value at start-up: make code the policy cannot judge"
	case strings.Contains(value, "$"):
		return "make " + shQuoteShort(t.text) + " assigns a value with a reference ($(shell …), $(file <…)): make code the policy cannot judge"
	case !makePlainName(name):
		return "make " + shQuoteShort(t.text) + " sets a special variable or one of make's own (MAKEFILES, .SHELLFLAGS, VPATH), which changes what make reads or runs"
	}
	return ""
}

// makePlainName reports a variable name made of letters, digits and
// underscores that is not one of make's own variables.
func makePlainName(n string) bool {
	if strings.HasPrefix(n, "MAKE") || strings.HasPrefix(n, "GNUMAKE") || n == "SHELL" || n == "VPATH" || n == "SUFFIXES" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c != '_' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return n != ""
}
