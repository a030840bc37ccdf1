package main

import (
	"crypto/rand"
	"encoding/base32"
	"flag"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/signoff-dev/signoff/internal/cmdflag"
)

// enrollCodeBytes is the code's randomness: 80 bits, written as 16
// base32 letters in four groups.
const enrollCodeBytes = 10

// enrollCode prints a fresh one-time enrollment code and its bcrypt hash:
// the hash goes in approvers.<id>.enroll_code_hash, the code to the person
// (docs/APPROVERS.md, "Register an authenticator").
func enrollCode(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("approver-bot enroll-code", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cost := fs.Int("cost", bcrypt.DefaultCost, fmt.Sprintf("bcrypt `cost` (%d to %d)", bcrypt.MinCost, bcrypt.MaxCost))
	cmdflag.Usage(fs, `Usage: approver-bot enroll-code [--cost N]

Makes a one-time enrollment code for an approver's first security key on
the web page and prints it, then its bcrypt hash: put the hash in
approvers.<id>.enroll_code_hash of the bot's config and give the code to the
person through another channel than their password. With
web.webauthn.first_key verified (the default), a password sign-in adds a
first key only with that code; an OIDC sign-in needs none.

Flags:
`)
	if code, done := parseHashFlags(fs, args, stdout, stderr, "enroll-code", "", cost); done {
		return code
	}
	raw := make([]byte, enrollCodeBytes)
	if _, err := rand.Read(raw); err != nil {
		fmt.Fprintf(stderr, "approver-bot enroll-code: %v\n", err)
		return exitError
	}
	letters := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw)
	groups := make([]string, 0, 4)
	for i := 0; i < len(letters); i += 4 {
		groups = append(groups, letters[i:min(i+4, len(letters))])
	}
	code := strings.Join(groups, "-")
	hash, err := bcrypt.GenerateFromPassword([]byte(code), *cost)
	if err != nil {
		fmt.Fprintf(stderr, "approver-bot enroll-code: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "code: %s\nenroll_code_hash: %s\n", code, hash)
	return exitOK
}
