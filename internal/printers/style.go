package printers

// Bold wraps s in ANSI bold; use only when colour is enabled.
func Bold(s string) string { return "\x1b[1m" + s + "\x1b[0m" }
