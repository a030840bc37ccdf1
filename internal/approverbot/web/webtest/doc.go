// Package webtest is a client of the approver bot's web page JSON API for
// tests that drive a running bot the way a signed-in browser does: sign in
// (POST /login, keeping the session cookie and the CSRF token), list the open
// questions (GET /api/questions) and answer one (POST /api/respond).
//
// It is test support, shared by the end-to-end tests of deploy/nats,
// internal/quickstart and integration/. It imports no testing package, so it
// adds nothing to a binary that happens to link it, and it reports failures
// as errors for the caller to judge.
package webtest
