// Package fileio is the one way kubectl-dynamo reads a file the user names and
// writes a file the user asks for. Files are hostile input: a path may name a
// device (/dev/zero), a named pipe that never delivers, a directory, a symbolic
// link to any of those, or one of the command's own inputs given again as an
// output.
//
// Reading (Open, ReadFile): a path must be a regular file, refused from its
// stat before it is opened when it is anything else (so a device is never
// opened at all), and bounded in size from the same stat. A regular file is
// opened once and every pass over it (a format sniff, one replay per variant)
// reads the same descriptor from the start: the path is never opened twice.
// Standard input ("-") and a descriptor the shell passed (/dev/fd/N as process
// substitution <(…) gives it, /dev/stdin) are streams: they are read once into
// memory, up to the limit, and every pass reads that copy. A named pipe (FIFO)
// given by another path is refused; pipe its data in with - instead.
//
// Writing (NewOutput, Output.Write): the path is checked before the command
// does any work — its directory exists and takes a new file, it is not a
// device, a pipe, a socket or a directory, and it is not one of the command's
// inputs (or another of its outputs). The file is written whole to a temporary
// file beside it and renamed over it, so a failure leaves the old file as it
// was. A new file gets the usual mode less the umask; a replaced file keeps its
// mode (and, where the process may, its owner). A symbolic link is written
// through: the file it points to is replaced and the link stays.
package fileio
