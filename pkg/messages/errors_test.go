package messages

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestFieldErrorText(t *testing.T) {
	err := error(&FieldError{Field: "tool", Problem: "must not be empty"})
	if got, want := err.Error(), `invalid request: field "tool": must not be empty`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Error("FieldError does not wrap ErrInvalid")
	}
	cause := errors.New("cause")
	withCause := error(&FieldError{Field: "f", Problem: "p", Err: cause})
	if !errors.Is(withCause, cause) || !errors.Is(withCause, ErrInvalid) {
		t.Error("FieldError with a cause does not wrap both the cause and ErrInvalid")
	}
}

func TestErrorReplyFor(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantCode ErrorCode
		wantMsg  string
	}{
		{"a field error is an invalid request", &FieldError{Field: "tool", Problem: "must not be empty"},
			CodeInvalidRequest, `invalid request: field "tool": must not be empty`},
		{"a token error is an invalid request", ValidateToken("team", "a.b"), CodeInvalidRequest, `team "a.b"`},
		{"a subject error is an invalid request", fmt.Errorf("%w: x", ErrInvalidSubject), CodeInvalidRequest, "invalid subject: x"},
		{"too large keeps its text", fmt.Errorf("%w: 70000 bytes, limit 65536", ErrTooLarge), CodeTooLarge, "limit 65536"},
		{"a version error keeps its text", fmt.Errorf("%w 2", ErrUnsupportedVersion), CodeUnsupportedVersion, "version 2"},
		{"not found keeps its text", fmt.Errorf("%w: request %q", ErrNotFound, "r1"), CodeNotFound, `request "r1"`},
		{"forbidden keeps its text", fmt.Errorf("%w: bob is not in team oncall", ErrForbidden), CodeForbidden, "bob is not"},
		{"unavailable hides its cause", fmt.Errorf("%w: dial tcp 10.0.0.3:6379: refused", ErrUnavailable), CodeUnavailable, msgUnavailable},
		{"an unknown error is internal and hides its text", errors.New("nil map write at broker.go:42"), CodeInternal, msgInternal},
		{"a context error is internal", context.DeadlineExceeded, CodeInternal, msgInternal},
		{"nil is internal", nil, CodeInternal, msgInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ErrorReplyFor(tt.err)
			if got.V != Version || got.Error.Code != tt.wantCode {
				t.Errorf("ErrorReplyFor = %+v, want v %d code %s", got, Version, tt.wantCode)
			}
			if !strings.Contains(got.Error.Message, tt.wantMsg) {
				t.Errorf("message = %q, want it to contain %q", got.Error.Message, tt.wantMsg)
			}
			if strings.Contains(got.Error.Message, "10.0.0.3") || strings.Contains(got.Error.Message, "broker.go") {
				t.Errorf("message leaks the cause: %q", got.Error.Message)
			}
		})
	}
}

func TestIsErrorReply(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		wantOK   bool
		wantCode ErrorCode
	}{
		{"an error reply", `{"v":1,"error":{"code":"invalid_request","message":"bad"}}`, true, CodeInvalidRequest},
		{"an error reply of another version", `{"v":2,"error":{"code":"unsupported_version","message":"v1 unsupported"}}`, true, CodeUnsupportedVersion},
		{"a receipt", `{"v":1,"request_id":"r","state":"pending","expires_at":"2026-03-14T09:31:53Z"}`, false, ""},
		{"a reply whose text is \"error\"", `{"v":1,"applied":false,"reason":"error"}`, false, ""},
		{"a reply with a nested error key", `{"v":1,"request_id":"r","decision":{"error":{"code":"x"}}}`, false, ""},
		{"a null error", `{"v":1,"error":null}`, false, ""},
		{"an error without a code", `{"v":1,"error":{"message":"x"}}`, false, ""},
		{"garbage", `"error"`, false, ""},
		{"empty", ``, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := IsErrorReply([]byte(tt.data))
			if ok != tt.wantOK {
				t.Fatalf("IsErrorReply ok = %v, want %v", ok, tt.wantOK)
			}
			if ok && got.Error.Code != tt.wantCode {
				t.Errorf("code = %q, want %q", got.Error.Code, tt.wantCode)
			}
		})
	}
}

func TestReplyErrorMatchesTheSentinelOfItsCode(t *testing.T) {
	sentinels := map[ErrorCode]error{
		CodeInvalidRequest:     ErrInvalid,
		CodeTooLarge:           ErrTooLarge,
		CodeUnsupportedVersion: ErrUnsupportedVersion,
		CodeNotFound:           ErrNotFound,
		CodeForbidden:          ErrForbidden,
		CodeUnavailable:        ErrUnavailable,
	}
	for code, want := range sentinels {
		t.Run(string(code), func(t *testing.T) {
			reply := NewErrorReply(code, "text")
			err := reply.Err()
			if !errors.Is(err, want) {
				t.Errorf("errors.Is(%v, %v) = false", err, want)
			}
			for other, s := range sentinels {
				if other != code && errors.Is(err, s) {
					t.Errorf("a %s reply also matches %v", code, s)
				}
			}
			if got := err.Error(); got != "signoff: "+string(code)+": text" {
				t.Errorf("Error() = %q", got)
			}
		})
	}
	t.Run("an internal reply matches no sentinel", func(t *testing.T) {
		reply := NewErrorReply(CodeInternal, "x")
		for _, s := range sentinels {
			if errors.Is(reply.Err(), s) {
				t.Errorf("internal reply matches %v", s)
			}
		}
	})
	t.Run("the reply of a mapped error maps back to it", func(t *testing.T) {
		orig := fmt.Errorf("%w: request r1", ErrNotFound)
		reply := ErrorReplyFor(orig)
		if !errors.Is(reply.Err(), ErrNotFound) {
			t.Errorf("round trip lost the sentinel: %v", reply.Err())
		}
	})
}
