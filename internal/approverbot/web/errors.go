package web

import "errors"

// ErrNoLogin: the config lets nobody sign in to the page (no approver has a
// password hash and no trusted header is set).
var ErrNoLogin = errors.New("web: no approver can sign in: set approvers.<id>.password_hash or web.trusted_header")
