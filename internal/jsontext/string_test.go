package jsontext_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/jsontext"
)

func TestAppendStringExamples(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"A#0", `"A#0"`},
		{`we"ird\#0`, `"we\"ird\\#0"`},
		{"a\x00b\x01c\x1fd", `"a\u0000b\u0001c\u001fd"`},
		{"tab\tnl\ncr\r", `"tab\u0009nl\u000acr\u000d"`},
		{"\x7f", "\"\x7f\""},                         // DEL is not a JSON control character
		{"héllo ✗ 🚀 \u2028", "\"héllo ✗ 🚀 \u2028\""}, // UTF-8 verbatim
		{"\ufffd", "\"\ufffd\""},                     // a real U+FFFD stays verbatim
		{"a\xffb", `"a\ufffdb"`},                     // invalid byte
		{"\xe2\x82", `"\ufffd\ufffd"`},               // truncated sequence: one per byte
		{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`},     // surrogate half
		{"<&>", `"<&>"`},
	}
	for _, tc := range tests {
		got := jsontext.AppendString(nil, tc.in)
		assert.Equal(t, tc.want, string(got), "%q", tc.in)
		assert.True(t, json.Valid(got), "%q -> %s", tc.in, got)
	}
	// appends to what is there
	assert.Equal(t, `x:"y"`, string(jsontext.AppendString([]byte("x:"), "y")))
}

// randomString mixes ASCII, control characters, quotes, backslashes,
// multi-byte UTF-8 and invalid bytes.
func randomString(r *rand.Rand) string {
	pieces := []string{"a", "Z", "#", " ", "\"", "\\", "/", "\x00", "\x01", "\x1f", "\t", "\n", "\x7f",
		"é", "✗", "🚀", "\u2028", "\ufffd", "\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80"}
	var b strings.Builder
	for range r.IntN(20) {
		if r.IntN(4) == 0 {
			b.WriteByte(byte(r.IntN(256)))
		} else {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
	}
	return b.String()
}

func TestAppendStringRoundTripsThroughEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		s := randomString(r)
		out := jsontext.AppendString(nil, s)
		require.True(t, json.Valid(out), "%q -> %s", s, out)
		var back string
		require.NoError(t, json.Unmarshal(out, &back), "%q -> %s", s, out)
		// encoding/json decodes each invalid byte to U+FFFD, as a
		// conversion to []rune does.
		want := string([]rune(s))
		require.Equal(t, want, back, "%q -> %s", s, out)
		// and agrees with encoding/json's own encoding
		std, err := json.Marshal(s)
		require.NoError(t, err)
		var viaStd string
		require.NoError(t, json.Unmarshal(std, &viaStd))
		require.Equal(t, viaStd, back)
		// valid UTF-8 without characters that need escaping is verbatim
		if utf8.ValidString(s) && !strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c == '"' || c == '\\' }) {
			require.Equal(t, `"`+s+`"`, string(out))
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "A#0", "\x00", "\xff", `"\`, "é\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := jsontext.AppendString(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%q -> %s: %v", s, out, err)
		}
		if back != string([]rune(s)) {
			t.Fatalf("%q -> %s -> %q", s, out, back)
		}
	})
}
