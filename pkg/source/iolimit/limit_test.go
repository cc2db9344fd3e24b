package iolimit

import (
	"errors"
	"strings"
	"testing"
)

func TestReadAtMost(t *testing.T) {
	if _, err := ReadAtMost(strings.NewReader("12345"), 4); !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("err = %v", err)
	}
	if b, err := ReadAtMost(strings.NewReader("1234"), 4); err != nil || string(b) != "1234" {
		t.Errorf("got %q %v", b, err)
	}
}
