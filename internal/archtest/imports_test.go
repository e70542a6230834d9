package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/regionsched/regionsched/"

// mustNotImport says, per package, which packages of the module it must
// not import (directly), so that imports point one way
// (docs/architecture.md): the pool and what sits behind it know nothing of
// graphs, an admission sees the pool only through the seam (slotpool),
// the core knows nothing of its drivers, the simulator knows nothing of
// the timeline picture, the files of a run know nothing of what runs or
// draws it, and nothing imports examples or cmd.
var mustNotImport = map[string][]string{
	"exchange":          {"resource", "topology", "region", "internal/strategy", "slotpool", "internal/pool", "admission", "scheduler", "multijob", "runfile", "simulator", "timeline", "slurm"},
	"resource":          {"exchange", "topology", "region", "internal/strategy", "slotpool", "internal/pool", "admission", "scheduler", "multijob", "runfile", "simulator", "timeline", "slurm"},
	"topology":          {"region", "internal/strategy", "slotpool", "internal/pool", "admission", "scheduler", "multijob", "runfile", "simulator", "timeline", "slurm"},
	"region":            {"internal/strategy", "slotpool", "internal/pool", "admission", "scheduler", "multijob", "runfile", "simulator", "timeline", "slurm"},
	"internal/strategy": {"slotpool", "internal/pool", "admission", "scheduler", "multijob", "runfile", "simulator", "timeline", "slurm"},
	// The seam knows nothing of the pool behind it.
	"slotpool":      {"topology", "region", "internal/strategy", "internal/pool", "admission", "scheduler", "multijob", "runfile", "simulator", "timeline", "slurm"},
	"internal/pool": {"topology", "region", "internal/strategy", "admission", "scheduler", "multijob", "runfile", "simulator", "timeline", "slurm"},
	"admission":     {"topology", "region", "internal/strategy", "internal/pool", "scheduler", "multijob", "runfile", "simulator", "timeline", "slurm"},
	"scheduler":     {"admission", "multijob", "runfile", "simulator", "timeline", "regiontest", "slurm"},
	// The multi-job scheduler sits on the scheduler and the admission.
	"multijob": {"internal/strategy", "internal/pool", "runfile", "simulator", "timeline", "regiontest", "slurm"},
	// The files of a run (inputs, trace) are read and written without
	// running anything: no engine, no simulator, no picture.
	"runfile": {"internal/strategy", "internal/pool", "scheduler", "multijob", "simulator", "timeline", "regiontest", "slurm"},
	// The simulator knows nothing of the picture drawn from its events,
	// and regiontest, which runs it in users' tests, draws none.
	"simulator":  {"internal/strategy", "internal/pool", "regiontest", "timeline", "slurm"},
	"regiontest": {"internal/strategy", "internal/pool", "timeline", "slurm"},
	// The picture is drawn from the trace events (runfile) alone: it
	// needs no simulator.
	"timeline": {"region", "internal/strategy", "slotpool", "internal/pool", "admission", "slurm", "scheduler", "multijob", "simulator", "regiontest"},
	// A backend sits on the multi-job scheduler, the admission seam and
	// the files of a run, never the reverse: nothing of the engine
	// imports a backend, and a backend runs nothing of the simulator.
	"slurm": {"internal/strategy", "internal/pool", "simulator", "timeline", "regiontest"},
	// The command drives the engine through the library's API, as users do.
	"cmd/regionsched": {"internal/strategy", "internal/pool"},
}

// simulatorImporters are the only directories (and those under them)
// whose non-test code may import the simulator: what runs simulations,
// the command, the test helpers users run in their tests, and the
// examples. The trace, the verdict and the files of a run are runfile's.
var simulatorImporters = []string{"simulator", "cmd/regionsched", "regiontest", "examples"}

// TestImportsPointOneWay checks every non-test file of the library's
// packages against mustNotImport, and that nothing imports examples/ or
// cmd/.
func TestImportsPointOneWay(t *testing.T) {
	fset := token.NewFileSet()
	for pkg, banned := range mustNotImport {
		for _, path := range sourceFiles(t, pkg) {
			f, err := parser.ParseFile(fset, filepath.Join(root, path), nil, parser.ImportsOnly)
			require.NoError(t, err)
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				local, ok := strings.CutPrefix(p, module)
				if !ok {
					continue
				}
				assert.NotContains(t, banned, local, "%s imports %s", path, p)
				assert.False(t, strings.HasPrefix(local, "examples") || strings.HasPrefix(local, "cmd"), "%s imports %s", path, p)
			}
		}
	}
	_, err := os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "root is the repository root")
}

// TestOnlyRunnersImportTheSimulator checks every non-test file of the
// module: only simulatorImporters import the simulator.
func TestOnlyRunnersImportTheSimulator(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || underAny(rel, simulatorImporters)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		checked++
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			assert.NotEqual(t, module+"simulator", p, "%s imports the simulator: use package runfile for the trace and the files of a run", rel)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, checked, 50, "the packages were found")
}

// underAny reports whether the slash-separated path dir is one of dirs
// or under one.
func underAny(dir string, dirs []string) bool {
	for _, d := range dirs {
		if dir == d || strings.HasPrefix(dir, d+"/") {
			return true
		}
	}
	return false
}
