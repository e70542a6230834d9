package admission

import (
	"cmp"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Keys that differ only by name are ordered as the names are (their heads
// settle most comparisons): names of every length around 8 bytes, with
// common prefixes, and with zero bytes, which the heads' padding is made of.
func TestKeysOrderNamesAsStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	alphabet := []byte{0, 1, 'a', 'b', 0xff}
	name := func() string {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	key := func(n string) orderKey { return orderKey{submit: 7, head: nameHead(n), name: n} }
	for range 20000 {
		a, b := name(), name()
		require.Equal(t, cmp.Compare(a, b), key(a).compare(key(b)), "%q vs %q", a, b)
	}
	for _, p := range [][2]string{{"job1234", "job12345"}, {"job10000", "job10001"}, {"abcdefgh", "abcdefgh\x00"}, {"x", "x\x00\x01"}, {"", "\x00"}} {
		require.Negative(t, key(p[0]).compare(key(p[1])), "%q before %q", p[0], p[1])
		require.Positive(t, key(p[1]).compare(key(p[0])), "%q after %q", p[1], p[0])
	}
}
