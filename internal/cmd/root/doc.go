// Package root assembles the kubectl-dynamo command tree: global flags, colour
// handling and every subcommand. It contains no command logic of its own.
package root
