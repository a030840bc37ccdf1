package policy

import (
	"errors"

	"github.com/signoff-dev/signoff/pkg/policy/internal/yamlconf"
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

// ConfigError reports a mistake in a policy file at a precise position:
// "file:line:col: message", the form editors and CI annotations understand.
type ConfigError = yamlconf.Error
