package routecore

import "testing"

// BenchmarkComputeBlocks measures block hashing throughput in bytes of token ids
// (4 bytes per token) per second, at Dynamo's common block size of 16.
func BenchmarkComputeBlocks(b *testing.B) {
	for _, n := range []int{8192, 32768} {
		toks := make([]uint32, n)
		for i := range toks {
			toks[i] = uint32(i*2654435761) % 151000
		}
		b.Run("tokens="+itoa(n)+"/block=16", func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ComputeBlocks(toks, 16, HashOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
