package archtest

import (
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

const module = "github.com/regionsched/regionsched/"

// mustNotImport says, per package, which packages of the module it must
// not import (directly), so that imports point one way
// (docs/architecture.md): the pool and what sits behind it know nothing of
// graphs, an admission sees the pool only through the seam (slotpool),
// the core knows nothing of its drivers, the simulator knows nothing of
// the timeline picture, and nothing imports examples or cmd.
var mustNotImport = map[string][]string{
	"exchange":          {"resource", "topology", "region", "internal/strategy", "slotpool", "internal/pool", "admission", "scheduler", "multijob", "simulator", "timeline", "slurm"},
	"resource":          {"exchange", "topology", "region", "internal/strategy", "slotpool", "internal/pool", "admission", "scheduler", "multijob", "simulator", "timeline", "slurm"},
	"topology":          {"region", "internal/strategy", "slotpool", "internal/pool", "admission", "scheduler", "multijob", "simulator", "timeline", "slurm"},
	"region":            {"internal/strategy", "slotpool", "internal/pool", "admission", "scheduler", "multijob", "simulator", "timeline", "slurm"},
	"internal/strategy": {"slotpool", "internal/pool", "admission", "scheduler", "multijob", "simulator", "timeline", "slurm"},
	// The seam knows nothing of the pool behind it.
	"slotpool":      {"topology", "region", "internal/strategy", "internal/pool", "admission", "scheduler", "multijob", "simulator", "timeline", "slurm"},
	"internal/pool": {"topology", "region", "internal/strategy", "admission", "scheduler", "multijob", "simulator", "timeline", "slurm"},
	"admission":     {"topology", "region", "internal/strategy", "internal/pool", "scheduler", "multijob", "simulator", "timeline", "slurm"},
	"scheduler":     {"admission", "multijob", "simulator", "timeline", "regiontest", "slurm"},
	// The multi-job scheduler sits on the scheduler and the admission.
	"multijob": {"internal/strategy", "internal/pool", "simulator", "timeline", "regiontest", "slurm"},
	// The simulator knows nothing of the picture drawn from its events,
	// and regiontest, which runs it in users' tests, draws none.
	"simulator":  {"internal/strategy", "internal/pool", "regiontest", "timeline", "slurm"},
	"regiontest": {"internal/strategy", "internal/pool", "timeline", "slurm"},
	// The picture is drawn from the simulator's events alone.
	"timeline": {"region", "internal/strategy", "slotpool", "internal/pool", "admission", "slurm", "scheduler", "multijob", "regiontest"},
	// A backend sits on the multi-job scheduler and the admission seam,
	// never the reverse: nothing of the engine imports a backend.
	"slurm": {"internal/strategy", "internal/pool", "timeline", "regiontest"},
	// The command drives the engine through the library's API, as users do.
	"cmd/regionsched": {"internal/strategy", "internal/pool"},
}

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
