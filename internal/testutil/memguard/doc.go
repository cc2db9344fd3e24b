// Package memguard bounds the memory a test may use, so that a test of a
// memory bound fails — rather than exhausting the machine — when the bound is
// broken: a watchdog samples the memory the Go runtime has mapped and ends the
// test binary with a message naming the test as soon as it passes the limit.
// The peak it saw is the test's figure for its bound. Nothing is timed: the
// test fails on the amount of memory, however long it took to get there.
package memguard
