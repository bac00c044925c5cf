package shapepoly

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// must returns v, panicking on err (Go cannot pass t alongside a multi-value call).
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("unexpected error: %v", err))
	}
	return v
}

// noErr fails the test on err.
func noErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// wantCode checks that err is a *Error with the code and a message containing every part.
func wantCode(t testing.TB, err error, code Code, parts ...string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want a *shapepoly.Error with %v, got %v (%T)", code, err, err)
	}
	if e.Code != code {
		t.Fatalf("want code %v, got %v: %s", code, e.Code, e.Message)
	}
	for _, p := range parts {
		if !strings.Contains(e.Message, p) {
			t.Fatalf("message %q does not contain %q", e.Message, p)
		}
	}
	return e
}

func newScope(t testing.TB, constraints ...string) *Scope {
	t.Helper()
	s, err := NewScope(constraints...)
	noErr(t, err)
	t.Cleanup(s.Close)
	return s
}
