// Package iostreams holds the process's standard streams together with terminal and
// colour decisions (--color, NO_COLOR, CLICOLOR_FORCE), so that every command writes
// through injected streams and tests can use in-memory buffers.
package iostreams
