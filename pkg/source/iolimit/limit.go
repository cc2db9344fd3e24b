package iolimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ErrResponseTooLarge is returned when an answer exceeds its size limit.
var ErrResponseTooLarge = errors.New("response too large")

// ReadAtMost reads r up to max bytes; more is ErrResponseTooLarge.
func ReadAtMost(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: more than %s", ErrResponseTooLarge, ByteSize(limit))
	}
	return data, nil
}

// ByteSize prints a byte count as limits are printed: "10 MiB", "512 KiB",
// "100 bytes".
func ByteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// IsTimeout reports whether err is a client or server timeout.
func IsTimeout(ctx context.Context, err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return strings.Contains(err.Error(), "Client.Timeout exceeded") || strings.Contains(err.Error(), "context deadline exceeded")
}
