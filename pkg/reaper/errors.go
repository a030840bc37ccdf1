package reaper

import "errors"

// ErrInvalidConfig is wrapped by the errors of [Config.Validate].
var ErrInvalidConfig = errors.New("reaper: invalid config")
