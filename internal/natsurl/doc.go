// Package natsurl holds helpers for the NATS server lists the binaries take
// as a single comma-separated string (the --nats-url flag and SIGNOFF_NATS_URL).
//
// [Redact] makes such a list safe to put into an error message or a log line:
// user passwords and bare tokens are replaced, hosts and ports are kept so the
// operator can still tell which server could not be reached. [Liveness] and
// [Auth] turn the binaries' ping settings and credentials into the same
// nats.go options for each of them.
package natsurl
