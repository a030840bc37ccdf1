package brokertest

import "github.com/signoff-dev/signoff/internal/testenv"

// LogBuffer collects log output written from several goroutines; it is
// [testenv.LogBuffer], named here too for the tests that use brokertest.
type LogBuffer = testenv.LogBuffer
