package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocSnippetsAreCompiled checks that every line of Go in the README's
// and docs' ```go blocks is a line of a compiled test of the repository
// (an Example, usually), whitespace aside, so that a snippet cannot go
// stale while the code it shows changes. Comments and lines with "..."
// are left out: they elide, they do not compile.
func TestDocSnippetsAreCompiled(t *testing.T) {
	tests := compiledLines(t)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	docs = append(docs, filepath.Join(root, "README.md"))
	checked := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, block := range goBlocks(string(data)) {
			for _, line := range strings.Split(block, "\n") {
				code := snippetCode(line)
				if code == "" {
					continue
				}
				checked++
				assert.True(t, tests[code], "%s: %q is in no test of the repository: make the snippet a line of an Example", filepath.Base(doc), strings.TrimSpace(line))
			}
		}
	}
	assert.Positive(t, checked, "the README shows Go")
}

var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// goBlocks returns the bodies of the ```go blocks of a Markdown text.
func goBlocks(md string) []string {
	var out []string
	for _, m := range goBlock.FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

// snippetCode returns a snippet line's code without its trailing comment
// and with its spaces normalized, or "" for a line that is no code to
// check (blank, a comment, an elision).
func snippetCode(line string) string {
	if i := strings.Index(line, "//"); i >= 0 && !strings.Contains(line[:i], `"`) {
		line = line[:i]
	}
	line = strings.Join(strings.Fields(line), " ")
	if line == "" || strings.Contains(line, "...") || line == "}" || line == ")" {
		return ""
	}
	return line
}

// compiledLines returns every line of the repository's test files,
// without trailing comments and with spaces normalized.
func compiledLines(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(data), "\n") {
			if code := snippetCode(line); code != "" {
				out[code] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}
