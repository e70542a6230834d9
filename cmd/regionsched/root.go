package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/runcli"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// Exit codes of docs/cli.md.
const (
	exitOK       = runcli.ExitOK
	exitNegative = runcli.ExitNegative
	exitBadInput = runcli.ExitBadInput
)

// formatsDoc is where the job file, cluster file and events file are
// described; every command's help points there.
const formatsDoc = "docs/job-file.md"

func badInput(err error) error { return runcli.BadInput(err) }

// negative reports a negative verdict. The command has already printed it
// (on standard output, or in JSON), so run prints nothing more.
func negative(verdict string) error { return runcli.Negative(verdict) }

// errUnknownCommand is the error of a first argument that names no command.
var errUnknownCommand = errors.New("unknown command")

// unknownCommandError names the unknown command and the commands that
// were probably meant (or, with no close match, all of them).
type unknownCommandError struct {
	name        string
	suggestions []string
	commands    []string
}

func (e *unknownCommandError) Error() string {
	if len(e.suggestions) > 0 {
		return fmt.Sprintf("%v %s; did you mean %s?", errUnknownCommand, e.name, strings.Join(e.suggestions, " or "))
	}
	return fmt.Sprintf("%v %s; the commands are %s", errUnknownCommand, e.name, strings.Join(e.commands, ", "))
}

func (e *unknownCommandError) Unwrap() error { return errUnknownCommand }

// errUnknownValue is the error of a flag value that is not one of the
// valid ones.
var errUnknownValue = errors.New("unknown value")

// flagValueError names a flag, what it takes, the value it was given and
// the valid ones.
type flagValueError struct {
	flag, what, value string
	valid             []string
	err               error // the cause (a package's sentinel), or errUnknownValue
}

func (e *flagValueError) Error() string {
	return fmt.Sprintf("--%s: unknown %s %q (valid: %s)", e.flag, e.what, e.value, strings.Join(e.valid, ", "))
}

func (e *flagValueError) Unwrap() error { return e.err }

// parseChoice returns the valid value that s spells, ignoring case and
// surrounding space (as --mode does), or a bad-input error naming the
// flag and listing the valid values.
func parseChoice(flag, what, s string, valid ...string) (string, error) {
	for _, v := range valid {
		if strings.EqualFold(strings.TrimSpace(s), v) {
			return v, nil
		}
	}
	return "", badInput(&flagValueError{flag: flag, what: what, value: s, valid: valid, err: errUnknownValue})
}

// parsePolicy parses --policy like the other flags: case-insensitively.
func parsePolicy(s string) (simulator.Policy, error) {
	p, err := simulator.ParsePolicy(strings.ToLower(strings.TrimSpace(s)))
	if err != nil {
		return 0, badInput(&flagValueError{flag: "policy", what: "scheduling policy", value: s, valid: []string{"region", "eager"}, err: err})
	}
	return p, nil
}

// parseTies parses --ties like the other flags: case-insensitively.
func parseTies(s string) (simulator.TieOrder, error) {
	t, err := simulator.ParseTieOrder(strings.TrimSpace(s))
	if err != nil {
		return 0, badInput(&flagValueError{flag: "ties", what: "tie order", value: s, valid: []string{"order", "seeded"}, err: err})
	}
	return t, nil
}

// seedText is the summary's "seed S", with ", seeded ties" when the seed
// orders simultaneous events too.
func seedText(seed uint64, ties simulator.TieOrder) string {
	if ties == simulator.TiesSeeded {
		return fmt.Sprintf("seed %d, seeded ties", seed)
	}
	return fmt.Sprintf("seed %d", seed)
}

// run executes the command line and returns the process exit code. Every
// message on standard error starts with one "regionsched" prefix: the
// path of the command that failed.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCommand(stdin)
	if name, ok := kubernetesCommand(root, args); ok {
		return runKubernetes(name, args, stdin, stdout, stderr)
	}
	if err := unknownCommand(root, args); err != nil {
		fmt.Fprintln(stderr, "regionsched:", err)
		fmt.Fprintln(stderr, "run 'regionsched --help' for usage")
		return exitBadInput
	}
	return runcli.Main(root, args, stdout, stderr)
}

// unknownCommand reports a first positional argument that is not a
// command, before cobra would complain about the flags that follow it
// ("simulat --slots 2 job.json" is a misspelt command, not an unknown
// flag of the root command).
func unknownCommand(root *cobra.Command, args []string) error {
	name := firstPositional(root, args)
	if name == "" || strings.HasPrefix(name, "__") { // cobra's hidden completion commands
		return nil
	}
	root.InitDefaultHelpCmd() // cobra adds help and completion when it executes
	root.InitDefaultCompletionCmd(args...)
	var commands []string
	for _, c := range root.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return nil
		}
		if c.IsAvailableCommand() {
			commands = append(commands, c.Name())
		}
	}
	return &unknownCommandError{name: name, suggestions: root.SuggestionsFor(name), commands: commands}
}

// firstPositional returns the first argument that is neither a flag nor a
// flag's value, or "" if there is none. A flag is taken to have a value
// when some command defines it without a default for the bare form.
func firstPositional(root *cobra.Command, args []string) string {
	takesValue := func(name string, short bool) bool {
		for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
			f := c.Flags().Lookup(name)
			if f == nil {
				f = c.PersistentFlags().Lookup(name)
			}
			if short {
				if f = c.Flags().ShorthandLookup(name); f == nil {
					f = c.PersistentFlags().ShorthandLookup(name)
				}
			}
			if f != nil {
				return f.NoOptDefVal == ""
			}
		}
		return false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		case strings.HasPrefix(a, "--"):
			if !strings.Contains(a, "=") && takesValue(a[2:], false) {
				i++
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if len(a) == 2 && takesValue(a[1:], true) {
				i++
			}
		default:
			return a
		}
	}
	return ""
}

func newRootCommand(stdin io.Reader) *cobra.Command {
	root := &cobra.Command{
		Use:   "regionsched",
		Short: "Pipelined-region scheduling for dataflow jobs: regions, deadlock checks, simulation",
		Long: `regionsched derives the pipelined regions of a dataflow job (as Apache Flink's
pipelined-region scheduler does), checks statically whether the job can run on a
cluster without deadlock, and simulates it in virtual time.

JOB is a job file (JSON), or - for standard input; CLUSTER is a cluster file.
` + formatsHelp + `

Exit codes: 0 success, 1 a negative verdict (not runnable, deadlock, failed job),
2 bad input or usage (the message names the field, vertex, edge or valid values).`,
		Version:       versionText(version, debug.ReadBuildInfo),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return badInput(fmt.Errorf("a command is missing: regions, check or simulate (see regionsched --help)"))
		},
	}
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.SuggestionsMinimumDistance = 2
	root.SetFlagErrorFunc(runcli.FlagError)
	// --mode is common to every command; as a persistent flag it may come
	// before or after the command name.
	mode := &modeFlag{mode: exchange.AllBlocking}
	root.PersistentFlags().Var(mode, "mode", "global data exchange mode: "+strings.Join(exchange.ModeNames(), ", ")+" (case-insensitive)")
	root.AddCommand(newRegionsCommand(stdin, mode), newCheckCommand(stdin, mode), newSimulateCommand(stdin, mode), newRunCommand(stdin, mode), newLeftoversCommand())
	for _, c := range root.Commands() {
		if c.Long == "" {
			c.Long = c.Short + ".\n\n" + formatsHelp
		}
	}
	return root
}

// formatsHelp points every command's help at the file formats.
const formatsHelp = "The job file, the cluster file and the events file (every field, its default\n" +
	"and range, with examples) are described in " + formatsDoc + " of the source\n" +
	"repository (github.com/regionsched/regionsched)."

// version is the version the command was stamped with at build time:
// make build sets it to what git describe --always --dirty says
// (go build -ldflags "-X main.version=v1.2.3" does it by hand); "" if the
// build was not stamped, and then the build information tells.
var version string

// versionText is what --version prints: the stamped version if there is
// one, else what readBuildInfo (debug.ReadBuildInfo) tells.
func versionText(stamped string, readBuildInfo func() (*debug.BuildInfo, bool)) string {
	if stamped != "" {
		return stamped
	}
	return buildVersion(readBuildInfo())
}

// buildVersion describes the build from its build information: the
// module version and the VCS revision it was built from.
func buildVersion(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "(unknown version: no build information)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		// go build -buildvcs=false, or no repository: nothing to tell.
		return v + ", revision unknown (no version stamped at build time, no VCS information in the build)"
	}
	v += ", revision " + rev
	if when != "" {
		v += " of " + when
	}
	if modified {
		v += " with uncommitted changes"
	}
	return v
}

// exactArgs is cobra.ExactArgs with a bad-input exit code.
func exactArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return badInput(fmt.Errorf("expected %s (a path or - for standard input), got %d", count(n, "job file argument"), len(args)))
		}
		return nil
	}
}

// loadJob reads and validates a job file; "-" is standard input.
func loadJob(path string, stdin io.Reader) (*topology.JobGraph, error) {
	return runcli.LoadJob(path, stdin)
}

// stdoutPath is the file name that means standard output for --trace and
// --svg.
const stdoutPath = runcli.StdoutPath

// checkOutputs refuses to write two outputs to standard output at once.
func checkOutputs(traceFile, svgFile string) error {
	if traceFile == stdoutPath && svgFile == stdoutPath {
		return badInput(fmt.Errorf("--trace - and --svg -: only one output can go to standard output"))
	}
	return nil
}

// summaryWriter is where a command's human-readable summary goes:
// standard output, unless --trace or --svg writes there, in which case it
// is standard error, so that standard output holds only the trace or the
// picture.
func summaryWriter(c *cobra.Command, outputs ...string) io.Writer {
	return runcli.SummaryWriter(c, outputs...)
}

// writeOutput writes an output file with write; "-" is standard output.
func writeOutput(c *cobra.Command, path string, write func(io.Writer) error) error {
	return runcli.WriteOutput(c, path, write)
}

// modeFlag is the --mode flag shared by every command.
type modeFlag struct{ mode exchange.Mode }

func (m *modeFlag) String() string { return m.mode.String() }
func (m *modeFlag) Type() string   { return "mode" }
func (m *modeFlag) Set(s string) error {
	v, err := exchange.ParseMode(s)
	if err != nil {
		return err
	}
	m.mode = v
	return nil
}
