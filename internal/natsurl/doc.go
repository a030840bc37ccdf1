// Package natsurl holds helpers for the NATS server lists the binaries take
// as a single comma-separated string (the --nats-url flag and SIGNOFF_NATS_URL).
//
// [Redact] makes such a list safe to put into an error message or a log line:
// user passwords and bare tokens are replaced, hosts and ports are kept so the
// operator can still tell which server could not be reached.
package natsurl
