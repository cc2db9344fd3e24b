// Package iolimit holds the bounded-read helpers every network source shares:
// ReadAtMost (a body read that fails with ErrResponseTooLarge past its limit),
// ByteSize (how limits are printed) and IsTimeout.
package iolimit
