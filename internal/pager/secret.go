package pager

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// secret is a credential. Every way of printing it prints "[redacted]", so
// a secret that slips into a log call or a %v does not leak.
type secret string

const redacted = "[redacted]"

func (secret) String() string               { return redacted }
func (secret) GoString() string             { return redacted }
func (secret) LogValue() slog.Value         { return slog.StringValue(redacted) }
func (secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// scrub removes the secret from text the vendor sent back (an error message
// that echoes the request).
func (s secret) scrub(text string) string {
	if len(s) < 4 {
		return text
	}
	return strings.ReplaceAll(text, string(s), redacted)
}

// maxSecretBytes bounds a secret file: a key is tens of bytes, and a path
// pointed at a large file by mistake should fail, not be read whole.
const maxSecretBytes = 4096

// loadSecret reads a credential from a file (trailing whitespace trimmed,
// as written by `echo` or a Kubernetes secret) or an environment variable.
// Errors name the file or variable and why, never the value.
func loadSecret(what, file, env string) (secret, error) {
	var raw string
	switch {
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return "", fmt.Errorf("%w: %s: %w", ErrInvalidConfig, what, err)
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxSecretBytes+1))
		if err != nil {
			return "", fmt.Errorf("%w: %s: read %s: %w", ErrInvalidConfig, what, file, err)
		}
		if len(data) > maxSecretBytes {
			return "", fmt.Errorf("%w: %s: %s is larger than %d bytes: not a key file", ErrInvalidConfig, what, file, maxSecretBytes)
		}
		raw = string(data)
	case env != "":
		v, ok := os.LookupEnv(env)
		if !ok {
			return "", fmt.Errorf("%w: %s: environment variable %s is not set", ErrInvalidConfig, what, env)
		}
		raw = v
	}
	v := strings.TrimSpace(raw)
	src := "file " + file
	if file == "" {
		src = "environment variable " + env
	}
	if v == "" {
		return "", fmt.Errorf("%w: %s: %s is empty", ErrInvalidConfig, what, src)
	}
	if strings.ContainsAny(v, " \t\r\n") {
		return "", fmt.Errorf("%w: %s: %s holds more than one word (a key has no whitespace)", ErrInvalidConfig, what, src)
	}
	for _, r := range v {
		if r < 0x21 || r > 0x7e {
			return "", fmt.Errorf("%w: %s: %s holds a character that is not printable ASCII", ErrInvalidConfig, what, src)
		}
	}
	return secret(v), nil
}
