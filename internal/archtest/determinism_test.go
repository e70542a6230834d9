package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// root is the repository root, relative to this package's directory.
const root = "../.."

// deterministic lists the packages that are deterministic state machines:
// no goroutine, no wall clock, no lock, no random source. Only the files
// in allowed may break the rule (the one driver that owns the loop).
var (
	deterministic = []string{"exchange", "resource", "topology", "region", "internal/strategy", "slotpool", "internal/pool", "admission", "slurm", "scheduler", "multijob", "timeline"}
	allowed       = map[string]bool{
		"scheduler/driver.go": true,
		"multijob/driver.go":  true,
		// The Slurm backend's adapter and poller own the polling
		// goroutine, the lock and the clock (its I/O layer; exec.go runs
		// the commands without any of them); its runtime (Run) runs the
		// tasks on goroutines of their own and names runs by the wall
		// clock. Its cluster state machine is checked like any other.
		"slurm/adapter.go":   true,
		"slurm/poller.go":    true,
		"slurm/pacer.go":     true,
		"slurm/run.go":       true,
		"slurm/run_tasks.go": true,
		"slurm/runid.go":     true,
	}
)

// forbiddenImports are packages whose mere import breaks determinism.
var forbiddenImports = map[string]string{
	"sync":                         "locks belong to the driver",
	"sync/atomic":                  "atomics belong to the driver",
	"math/rand":                    "a random source",
	"math/rand/v2":                 "a random source",
	"crypto/rand":                  "a random source",
	"github.com/benbjohnson/clock": "the clock belongs to the driver",
}

// forbiddenCalls are selector calls that read the wall clock or start
// timers.
var forbiddenCalls = map[string]bool{
	"time.Now": true, "time.Since": true, "time.Until": true, "time.Sleep": true,
	"time.After": true, "time.AfterFunc": true, "time.NewTimer": true, "time.NewTicker": true, "time.Tick": true,
}

// sourceFiles returns the non-test Go files of a package directory.
func sourceFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, dir))
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			out = append(out, dir+"/"+name)
		}
	}
	return out
}

// violations lists what in one file (a path on disk) breaks determinism.
func violations(t *testing.T, fset *token.FileSet, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	var out []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if why, bad := forbiddenImports[p]; bad {
			out = append(out, fset.Position(imp.Pos()).String()+": imports "+p+" ("+why+")")
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			out = append(out, fset.Position(n.Pos()).String()+": starts a goroutine")
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && forbiddenCalls[id.Name+"."+n.Sel.Name] {
				out = append(out, fset.Position(n.Pos()).String()+": uses "+id.Name+"."+n.Sel.Name)
			}
		}
		return true
	})
	return out
}

// TestCoreIsDeterministic: no goroutine, wall clock, lock or random source
// in the state machines; only the driver has them.
func TestCoreIsDeterministic(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range deterministic {
		for _, path := range sourceFiles(t, dir) {
			if allowed[path] {
				continue
			}
			checked++
			assert.Empty(t, violations(t, fset, filepath.Join(root, path)), path)
		}
	}
	assert.Greater(t, checked, 50, "the packages were found")
}

// TestDriverIsWhereTheLoopLives: the allowed file really is the one place
// with a goroutine and a clock (so the exception is not stale).
func TestDriverIsWhereTheLoopLives(t *testing.T) {
	fset := token.NewFileSet()
	for path := range allowed {
		assert.NotEmpty(t, violations(t, fset, filepath.Join(root, path)), path)
	}
}

// TestTheCheckCatchesViolations runs the checker on a file made to break
// every rule.
func TestTheCheckCatchesViolations(t *testing.T) {
	dir := t.TempDir()
	src := `package bad

import (
	"math/rand/v2"
	"sync"
	"time"
)

var mu sync.Mutex

func f() int {
	go func() {}()
	_ = time.Now()
	return rand.IntN(3)
}
`
	file := filepath.Join(dir, "bad.go")
	require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
	got := violations(t, token.NewFileSet(), file)
	assert.Len(t, got, 4, "%v", got) // rand, sync, go, time.Now
}
