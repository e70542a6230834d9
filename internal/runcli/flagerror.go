package runcli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// validAnnotation is the flag annotation SetValid records a flag's valid
// values under.
const validAnnotation = "runcli/valid"

// SetValid records, for FlagError, the values flag name of fs takes, in
// words: "an integer in 0 ... 1024", "a number more than 0 and at most 1".
// It panics if fs has no such flag (a programmer error).
func SetValid(fs *pflag.FlagSet, name, valid string) {
	if err := fs.SetAnnotation(name, validAnnotation, []string{valid}); err != nil {
		panic(fmt.Sprintf("runcli.SetValid: %v", err))
	}
}

// typeValid is, by the type name of a flag's value, what a flag of that
// type takes when SetValid said nothing about it.
var typeValid = map[string]string{
	"bool":     "true or false",
	"int":      "an integer",
	"int64":    "an integer",
	"uint":     "an integer of 0 or more",
	"uint64":   "an integer in 0 ... 18446744073709551615",
	"float32":  "a number",
	"float64":  "a number",
	"duration": "a duration such as 90s, 1m30s, 500ms or 0",
}

// FlagError is a command line's flag error function (for cobra's
// SetFlagErrorFunc): every flag error is bad input (ExitBadInput), and a
// value a flag does not take reads "--seed: invalid value "-1" (valid: an
// integer in 0 ... 18446744073709551615)": the flag, the value and the
// valid values SetValid recorded, or those of the flag's type, instead of
// the parser's message ("strconv.ParseUint: parsing "-1": invalid
// syntax"). A flag of another type without SetValid keeps the message of
// its own parser, which says what it takes, after the flag: "--mode:
// unknown global data exchange mode "x" (valid: ...)".
func FlagError(_ *cobra.Command, err error) error {
	var bad *pflag.InvalidValueError
	if errors.As(err, &bad) {
		f := bad.GetFlag()
		valid := typeValid[f.Value.Type()]
		if v := f.Annotations[validAnnotation]; len(v) > 0 {
			valid = strings.Join(v, ", ")
		}
		err = &InvalidValueError{Flag: f.Name, Value: bad.GetValue(), Valid: valid, Err: bad}
	}
	return BadInput(err)
}

// InvalidValueError is a value a flag does not take (FlagError).
type InvalidValueError struct {
	Flag  string // the flag's name, without dashes
	Value string // the value given
	Valid string // the values the flag takes, in words ("": its parser's error says)
	Err   error  // the error of pflag, wrapping the parser's
}

// Error names the flag, the value and the valid values, or the flag and
// its parser's message when Valid is "".
func (e *InvalidValueError) Error() string {
	if e.Valid == "" {
		var bad *pflag.InvalidValueError
		if errors.As(e.Err, &bad) && bad.Unwrap() != nil {
			return fmt.Sprintf("--%s: %v", e.Flag, bad.Unwrap())
		}
		return e.Err.Error()
	}
	return fmt.Sprintf("--%s: invalid value %q (valid: %s)", e.Flag, e.Value, e.Valid)
}

// Unwrap returns the error of pflag, wrapping the parser's.
func (e *InvalidValueError) Unwrap() error { return e.Err }
