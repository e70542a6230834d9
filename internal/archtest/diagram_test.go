package archtest

import (
	"cmp"
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateDiagram = flag.Bool("update", false, "write docs/packages.svg from the packages' imports")

// diagramOrder lists the packages of docs/packages.svg, left to right
// within a row (the rows come from the imports: a package sits one row
// above the highest package it imports). Every public package of the
// repository must be listed (TestPackageDiagram fails naming a missing
// one); of the internal ones only the engine's insides are drawn.
var diagramOrder = [][]string{
	{"cmd/regionsched", "kubernetes/cmd/regionsched-kubernetes", "examples/wordcount"},
	{"regiontest", "simulator", "slurm", "kubernetes"},
	{"timeline", "multijob"},
	{"runfile", "scheduler", "admission"},
	{"region", "internal/strategy", "internal/pool", "slotpool"},
	{"topology"},
	{"exchange", "resource"},
}

// diagramNotes says what a box is for, under its name.
var diagramNotes = map[string]string{
	"cmd/regionsched":                       "the CLI: flags and printing",
	"kubernetes/cmd/regionsched-kubernetes": "kubernetes/cmd: run --kubernetes",
	"examples/wordcount":                    "a real runtime",
	"regiontest":                            "deadlock checks in go test",
	"simulator":                             "virtual time",
	"slurm":                                 "backend: Slurm",
	"kubernetes":                            "backend: Kubernetes (own module)",
	"timeline":                              "pictures of traces",
	"multijob":                              "many jobs: state machine + driver",
	"runfile":                               "inputs, cluster, events, trace",
	"scheduler":                             "one job: state machine + driver",
	"admission":                             "queues, policies, the Cluster seam",
	"region":                                "pipelined regions, feasibility",
	"internal/strategy":                     "region strategy, failover",
	"internal/pool":                         "the slot pool",
	"slotpool":                              "the seam: slots and messages",
	"topology":                              "job graph, execution topology",
	"exchange":                              "exchange modes",
	"resource":                              "resource profiles",
}

// TestPackageDiagram checks that docs/packages.svg is drawn from the
// packages' imports as they are: every drawn package exists, every public
// package is drawn, and the arrows are the direct imports between drawn
// packages less those implied by a longer path. go test -update writes it.
func TestPackageDiagram(t *testing.T) {
	drawn := map[string]bool{}
	for _, row := range diagramOrder {
		for _, p := range row {
			drawn[p] = true
		}
	}
	for _, p := range publicPackages(t) {
		assert.True(t, drawn[p], "package %s is not in docs/packages.svg: add it to diagramOrder", p)
	}
	imports := map[string][]string{}
	for p := range drawn {
		_, err := os.Stat(filepath.Join(root, p))
		require.NoError(t, err, "diagramOrder names %s", p)
		imports[p] = localImports(t, p, drawn)
	}
	svg := drawDiagram(rows(imports), reduce(imports))
	path := filepath.Join(root, "docs", "packages.svg")
	if *updateDiagram {
		require.NoError(t, os.WriteFile(path, []byte(svg), 0o644))
	}
	old, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, svg, string(old), "docs/packages.svg is stale: go test ./internal/archtest -run TestPackageDiagram -update")
}

// publicPackages lists the directories with non-test Go files outside
// internal/, testdata/ and hidden directories.
func publicPackages(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (name == "internal" || name == "testdata" || strings.HasPrefix(name, ".") || name == "out" || name == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		if rel != "." && !slices.Contains(out, filepath.ToSlash(rel)) {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// localImports returns the drawn packages that pkg's non-test files import.
func localImports(t *testing.T, pkg string, drawn map[string]bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	var out []string
	for _, path := range sourceFiles(t, pkg) {
		f, err := parser.ParseFile(fset, filepath.Join(root, path), nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if local, ok := strings.CutPrefix(p, module); ok && drawn[local] && !slices.Contains(out, local) {
				out = append(out, local)
			}
		}
	}
	slices.Sort(out)
	return out
}

// reduce drops an import a -> c when a reaches c through another import
// (a transitive reduction of the acyclic import graph).
func reduce(imports map[string][]string) map[string][]string {
	var reaches func(from, to string, seen map[string]bool) bool
	reaches = func(from, to string, seen map[string]bool) bool {
		for _, n := range imports[from] {
			if n == to {
				return true
			}
			if !seen[n] {
				seen[n] = true
				if reaches(n, to, seen) {
					return true
				}
			}
		}
		return false
	}
	out := map[string][]string{}
	for a, cs := range imports {
		for _, c := range cs {
			implied := false
			for _, b := range cs {
				if b != c && reaches(b, c, map[string]bool{}) {
					implied = true
					break
				}
			}
			if !implied {
				out[a] = append(out[a], c)
			}
		}
	}
	return out
}

// rows puts each drawn package one row above the highest it imports
// (row 0 at the top), in diagramOrder's order within a row.
func rows(imports map[string][]string) [][]string {
	height := map[string]int{} // 0: imports no drawn package
	var of func(p string) int
	of = func(p string) int {
		if h, ok := height[p]; ok {
			return h
		}
		h := 0
		for _, c := range imports[p] {
			h = max(h, of(c)+1)
		}
		height[p] = h
		return h
	}
	top := 0
	for p := range imports {
		top = max(top, of(p))
	}
	out := make([][]string, top+1)
	for _, row := range diagramOrder {
		for _, p := range row {
			out[top-height[p]] = append(out[top-height[p]], p)
		}
	}
	// Fewer crossings: each row below the top in the order of the mean
	// position of its importers in the rows above (stable for ties).
	pos := map[string]float64{}
	for i, row := range out {
		if i > 0 {
			mean := func(p string) float64 {
				sum, n := 0.0, 0
				for a, cs := range imports {
					if _, placed := pos[a]; placed && slices.Contains(cs, p) {
						sum, n = sum+pos[a], n+1
					}
				}
				if n == 0 {
					return 0.5
				}
				return sum / float64(n)
			}
			slices.SortStableFunc(row, func(a, b string) int { return cmp.Compare(mean(a), mean(b)) })
		}
		for j, p := range row {
			pos[p] = (float64(j) + 0.5) / float64(len(row))
		}
	}
	return out
}

// drawDiagram lays the rows out centred, one box per package with its
// note, and an arrow from each importer's bottom to each import's top.
func drawDiagram(layers [][]string, edges map[string][]string) string {
	const (
		boxW, boxH = 190.0, 44.0
		gapX, gapY = 24.0, 46.0
		margin     = 20.0
		titleH     = 30.0
	)
	widest := 0
	for _, row := range layers {
		widest = max(widest, len(row))
	}
	width := max(margin*2+float64(widest)*boxW+float64(widest-1)*gapX, 980)
	height := margin*2 + titleH + float64(len(layers))*boxH + float64(len(layers)-1)*gapY
	type box struct{ x, y float64 }
	at := map[string]box{}
	for i, row := range layers {
		rowW := float64(len(row))*boxW + float64(len(row)-1)*gapX
		x0 := (width - rowW) / 2
		for j, p := range row {
			at[p] = box{x0 + float64(j)*(boxW+gapX), margin + titleH + float64(i)*(boxH+gapY)}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="DejaVu Sans, Verdana, sans-serif">`+"\n", width, height, width, height)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>` + "\n")
	fmt.Fprintf(&b, `<rect width="%.0f" height="%.0f" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="15" font-weight="bold">regionsched: packages and their imports (an arrow: imports; implied imports left out)</text>`+"\n", margin, margin+14)
	var from []string
	for a := range edges {
		from = append(from, a)
	}
	slices.Sort(from)
	for _, a := range from {
		cs := slices.Clone(edges[a])
		slices.Sort(cs)
		for _, c := range cs {
			pa, pc := at[a], at[c]
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555" stroke-width="1.2" marker-end="url(#arrow)"><title>%s imports %s</title></line>`+"\n",
				pa.x+boxW/2, pa.y+boxH, pc.x+boxW/2, pc.y, a, c)
		}
	}
	for _, row := range layers {
		for _, p := range row {
			x, y := at[p].x, at[p].y
			fill, stroke, dash := "#e8f0fa", "#4e79a7", ""
			switch {
			case strings.HasPrefix(p, "internal/"):
				fill, stroke, dash = "#f2f2f2", "#888", ` stroke-dasharray="4 3"`
			case p == "slurm" || p == "kubernetes":
				fill, stroke = "#fdf0e0", "#f28e2b"
			case strings.Contains(p, "cmd/") || strings.HasPrefix(p, "examples/"):
				fill, stroke = "#eaf5ea", "#59a14f"
			}
			// A command of a module of its own is named by its
			// directory; its note says where it is.
			label, size := p, 13.0
			if i := strings.Index(p, "/cmd/"); i >= 0 {
				label, size = p[i+len("/cmd/"):], 12
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.0f" height="%.0f" rx="6" fill="%s" stroke="%s" stroke-width="1.5"%s/>`+"\n", x, y, boxW, boxH, fill, stroke, dash)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%g" font-weight="bold" text-anchor="middle">%s</text>`+"\n", x+boxW/2, y+18, size, label)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10.5" fill="#444" text-anchor="middle">%s</text>`+"\n", x+boxW/2, y+34, diagramNotes[p])
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}
