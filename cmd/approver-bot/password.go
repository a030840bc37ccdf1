package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/term"

	"github.com/signoff-dev/signoff/internal/cmdflag"
)

// minPasswordBytes is the shortest password hash-password accepts: the web
// page's password guards who may approve tool calls.
const minPasswordBytes = 8

// maxPasswordBytes is bcrypt's limit; longer passwords are refused rather
// than silently cut.
const maxPasswordBytes = 72

// hashPassword is `approver-bot hash-password`: it reads a password and
// prints its bcrypt hash.
func hashPassword(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("approver-bot hash-password", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cost := fs.Int("cost", bcrypt.DefaultCost, fmt.Sprintf("bcrypt `cost` (%d to %d)", bcrypt.MinCost, bcrypt.MaxCost))
	cmdflag.Usage(fs, fmt.Sprintf(`Usage: approver-bot hash-password [--cost N] < password

Reads a password — typed twice without echo when stdin is a terminal, else
the first line of stdin — and prints its bcrypt hash, the value of
approvers.<id>.password_hash in the bot's config. Passwords are %d to %d
bytes.

Flags:
`, minPasswordBytes, maxPasswordBytes))
	if code, done := parseHashFlags(fs, args, stdout, stderr, "hash-password", "the password is read from stdin, never from the command line", cost); done {
		return code
	}
	pw, err := readPassword(stdin, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "approver-bot hash-password: %v\n", err)
		return exitUsage
	}
	switch {
	case len(pw) < minPasswordBytes:
		fmt.Fprintf(stderr, "approver-bot hash-password: the password has %d bytes; use at least %d\n", len(pw), minPasswordBytes)
		return exitUsage
	case len(pw) > maxPasswordBytes:
		fmt.Fprintf(stderr, "approver-bot hash-password: the password has %d bytes; bcrypt uses at most %d\n", len(pw), maxPasswordBytes)
		return exitUsage
	}
	hash, err := bcrypt.GenerateFromPassword(pw, *cost)
	if err != nil {
		fmt.Fprintf(stderr, "approver-bot hash-password: %v\n", err)
		return exitError
	}
	fmt.Fprintln(stdout, string(hash))
	return exitOK
}

// readPassword reads the password: twice without echo from a terminal,
// else the first line of in.
func readPassword(in io.Reader, prompt io.Writer) ([]byte, error) {
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fd := int(f.Fd())
		fmt.Fprint(prompt, "Password: ")
		first, err := term.ReadPassword(fd)
		fmt.Fprintln(prompt)
		if err != nil {
			return nil, fmt.Errorf("read the password: %w", err)
		}
		fmt.Fprint(prompt, "Again: ")
		again, err := term.ReadPassword(fd)
		fmt.Fprintln(prompt)
		if err != nil {
			return nil, fmt.Errorf("read the password: %w", err)
		}
		if !bytes.Equal(first, again) {
			return nil, errors.New("the two passwords differ")
		}
		return first, nil
	}
	line, err := bufio.NewReader(in).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read the password from stdin: %w", err)
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

// parseHashFlags parses the flags of a subcommand that hashes (command:
// enroll-code, hash-password) as parseFlags does, and refuses arguments
// (hint says why, if not empty) and a cost that is not bcrypt's; done is
// set with the exit status when the subcommand is not to run.
func parseHashFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, command, hint string, cost *int) (code int, done bool) {
	if code, done := parseFlags(fs, args, stdout); done {
		return code, true
	}
	if !cmdflag.NoArgs(fs, stderr, "approver-bot "+command, hint) {
		return exitUsage, true
	}
	if *cost < bcrypt.MinCost || *cost > bcrypt.MaxCost {
		fmt.Fprintf(stderr, "approver-bot %s: --cost %d: want %d to %d\n", command, *cost, bcrypt.MinCost, bcrypt.MaxCost)
		return exitUsage, true
	}
	return exitOK, false
}
