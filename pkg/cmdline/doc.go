// Package cmdline reads container command lines as the kubelet and a shell
// would: Argv applies the kubelet's $(VAR) expansion and splits a shell's -c
// script into words (Words), CommandWords opens command lines nested inside
// words (mpirun's `bash -c '…'`) up to MaxNesting. Role detection, the router
// configuration, the routing-health rules and the DynoSim export all read
// worker flags through it. Standard library only.
package cmdline
