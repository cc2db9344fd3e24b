// Package jsonscan is a small allocation-light JSON scanner: validation and
// value extents (Validate, Skip, Span), member and element iteration over the
// raw bytes, and a Decoder that builds the same values as encoding/json into
// map[string]any (numbers kept as json.Number, repeated short strings
// interned). The capture reader and the DynamoWorkerMetadata decoder use it to
// read large documents without decoding what they skip; their tests prove it
// agrees with encoding/json. Standard library only.
package jsonscan
