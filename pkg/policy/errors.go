package policy

import (
	"errors"
	"strconv"
	"strings"
)

// ErrInvalidLines is returned by [RunCheck] when at least one input line
// could not be evaluated; the other lines were still judged and written.
var ErrInvalidLines = errors.New("some input lines could not be evaluated")

// Errors about a call's arguments; they make the call at least ask.
var (
	errArgsNotJSON   = errors.New("arguments are not valid JSON")
	errArgsNotObject = errors.New("arguments are not a JSON object")
)

// errRuleEmpty is the syntax error of a blank rule string.
var errRuleEmpty = errors.New("empty rule")

// ConfigError reports a mistake in a policy file at a precise position.
// Line and Column are 1-based; zero means unknown (the error then concerns
// the file as a whole).
type ConfigError struct {
	File   string
	Line   int
	Column int
	Msg    string
}

// Error formats the error as "file:line:col: message", the form editors and
// CI annotations understand.
func (e *ConfigError) Error() string {
	var b strings.Builder
	file := e.File
	if file == "" {
		file = "<policy>"
	}
	b.WriteString(file)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Column))
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}
