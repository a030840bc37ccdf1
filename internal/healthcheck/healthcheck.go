package healthcheck

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/internal/cmdflag"
)

// DefaultTimeout bounds one probe: below Docker's default healthcheck
// timeout (30 s) and the compose file's (3 s).
const DefaultTimeout = 2 * time.Second

// Probe GETs rawURL and returns nil when it answers 200 within timeout;
// otherwise an error with the status and the start of the body (the
// readiness endpoints say there what is not ready).
func Probe(ctx context.Context, rawURL string, timeout time.Duration) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("health URL %q: want http://host:port/path", rawURL)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	hc := &http.Client{
		// Probes go to this container; never through a proxy from the
		// environment.
		Transport: &http.Transport{Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("health endpoints do not redirect")
		},
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", u.Redacted(), resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// LocalURL turns a listen address ("0.0.0.0:8080", ":8080", "[::]:8080",
// "127.0.0.1:8080") into the URL of path on it as seen from the same host:
// an unspecified address becomes the loopback one.
func LocalURL(listen, path string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + path, nil
}

// Main is a health subcommand: `NAME [--url URL] [--timeout D]`. It probes
// the URL (defaultURL unless --url) and returns the exit status: 0 healthy,
// 1 not, 2 for bad flags. The reason goes to stderr.
func Main(name string, args []string, defaultURL string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("url", defaultURL, "`URL` to GET; healthy when it answers 200")
	timeout := fs.Duration("timeout", DefaultTimeout, "how long the probe may take")
	cmdflag.Usage(fs, fmt.Sprintf("Usage: %s [--url URL] [--timeout D]\n\n"+
		"Exits 0 when URL answers 200 (a container healthcheck for images\n"+
		"without a shell), 1 when not, with the reason on stderr.\n\nFlags:\n", name))
	if code, stop := cmdflag.Parse(fs, args); stop {
		return code
	}
	if !cmdflag.NoArgs(fs, stderr, name, "") {
		return 2
	}
	if *timeout <= 0 {
		fmt.Fprintf(stderr, "%s: --timeout %s must be positive\n", name, *timeout)
		return 2
	}
	if err := Probe(context.Background(), *target, *timeout); err != nil {
		fmt.Fprintf(stderr, "%s: unhealthy: %v\n", name, err)
		return 1
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}
