// Package cmdutil holds what every command shares: the Factory of lazily built
// dependencies, typed errors and the exit codes they map to, and flag helpers such
// as the -o/--output flag.
package cmdutil
