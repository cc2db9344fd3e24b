// Package redact removes what a capture file or an error message may not
// carry: Secret data, env values and flags whose names say they are secret,
// credentials in URLs (URLs), and annotations that embed whole objects.
// Redact works on a raw.Bundle before capture writes it; Object on one
// Kubernetes object. docs/capture-format.md lists the rules.
package redact
