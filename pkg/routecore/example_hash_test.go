package routecore_test

import (
	"fmt"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// ExampleComputeBlocks hashes twelve tokens in blocks of four, reproducing
// Dynamo's published vectors.
func ExampleComputeBlocks() {
	tokens := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	blocks, err := routecore.ComputeBlocks(tokens, 4, routecore.HashOptions{})
	if err != nil {
		panic(err)
	}
	for _, b := range blocks {
		fmt.Println(b.Index, uint64(b.LocalHash), uint64(b.SequenceHash))
	}
	// Output:
	// 0 14643705804678351452 14643705804678351452
	// 1 16777012769546811212 4945711292740353085
	// 2 483935686894639516 12583592247330656132
}

// ExampleSaltSeed shows that a LoRA adapter changes the seed of every local hash.
func ExampleSaltSeed() {
	fmt.Println(routecore.SaltSeed("", ""))
	fmt.Println(routecore.SaltSeed("my-adapter", "") != routecore.HashSeed)
	// Output:
	// 1337
	// true
}
