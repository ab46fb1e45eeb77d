package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// flagSet is a command's flags, each bound to a field of the command:
// pflag parses the command line, viper layers it over PIPELINE_*
// variables and the configuration file, and decode sets every bound field
// from the result, checking it.
type flagSet struct {
	*pflag.FlagSet
	decoders []func(v *viper.Viper) []string
}

func newFlagSet(name string, stderr io.Writer) *flagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs}
}

// decode sets the bound fields from v (flags, then PIPELINE_*, then the
// configuration file, then the defaults) and returns every problem.
func (f *flagSet) decode(v *viper.Viper) []string {
	var problems []string
	for _, d := range f.decoders {
		problems = append(problems, d(v)...)
	}
	return problems
}

func (f *flagSet) then(d func(v *viper.Viper) []string) { f.decoders = append(f.decoders, d) }

// set reports whether a flag, PIPELINE_* variable or the configuration
// file set name (rather than its default).
func (f *flagSet) set(v *viper.Viper, name string) bool {
	return f.Changed(name) || v.GetString(name) != f.Lookup(name).DefValue
}

// String binds a string flag.
func (f *flagSet) String(dst *string, name, def, usage string) {
	f.FlagSet.String(name, def, usage)
	f.then(func(v *viper.Viper) []string { *dst = v.GetString(name); return nil })
}

// NonEmpty binds a string flag that must not be empty.
func (f *flagSet) NonEmpty(dst *string, name, def, usage string) {
	f.FlagSet.String(name, def, usage)
	f.then(func(v *viper.Viper) []string {
		if *dst = v.GetString(name); *dst == "" {
			return []string{fmt.Sprintf("--%s (or %s): must not be empty", name, envName(name))}
		}
		return nil
	})
}

// OneOf binds a string flag that takes one of values.
func (f *flagSet) OneOf(dst *string, name, def, usage string, values ...string) {
	f.FlagSet.String(name, def, usage)
	f.then(func(v *viper.Viper) []string {
		*dst = v.GetString(name)
		for _, ok := range values {
			if *dst == ok {
				return nil
			}
		}
		return []string{fmt.Sprintf("--%s (or %s): %q is neither %s", name, envName(name), *dst, strings.Join(values, " nor "))}
	})
}

// Strings binds a flag given any number of times, each value a
// comma-separated list.
func (f *flagSet) Strings(dst *[]string, name, usage string) {
	f.FlagSet.StringArray(name, nil, usage)
	f.then(func(v *viper.Viper) []string {
		vals := v.GetStringSlice(name)
		if f.Changed(name) {
			vals, _ = f.GetStringArray(name)
		}
		*dst = nil
		for _, val := range vals {
			for _, s := range strings.Split(val, ",") {
				if s = strings.TrimSpace(s); s != "" {
					*dst = append(*dst, s)
				}
			}
		}
		return nil
	})
}

// Bool binds a boolean flag (default false).
func (f *flagSet) Bool(dst *bool, name, usage string) {
	f.FlagSet.Bool(name, false, usage)
	f.then(func(v *viper.Viper) []string {
		var err error
		if *dst, err = boolSetting(v, name); err != nil {
			return []string{err.Error()}
		}
		return nil
	})
}

// Int binds an integer flag of at least least.
func (f *flagSet) Int(dst *int, name string, def, least int, usage string) {
	f.FlagSet.Int(name, def, usage)
	atLeast(f, dst, name, least, intSetting)
}

// Int64 binds an integer flag, given as text, of at least least.
func (f *flagSet) Int64(dst *int64, name string, def string, least int64, usage string) {
	f.FlagSet.String(name, def, usage)
	atLeast(f, dst, name, least, int64Setting)
}

// atLeast sets dst to the integer parse reads from the setting name,
// refusing one below least.
func atLeast[T int | int64](f *flagSet, dst *T, name string, least T, parse func(*viper.Viper, string) (T, error)) {
	f.then(func(v *viper.Viper) []string {
		n, err := parse(v, name)
		switch {
		case err != nil:
			return []string{err.Error()}
		case n < least:
			return []string{fmt.Sprintf("--%s (or %s): must be >= %d, got %d", name, envName(name), least, n)}
		}
		*dst = n
		return nil
	})
}

// Uint64 binds a non-negative integer flag, given as text.
func (f *flagSet) Uint64(dst *uint64, name, def, usage string) {
	f.FlagSet.String(name, def, usage)
	f.then(func(v *viper.Viper) []string {
		n, err := strconv.ParseUint(strings.TrimSpace(v.GetString(name)), 10, 64)
		if err != nil {
			return []string{fmt.Sprintf("--%s (or %s): %q is not a non-negative integer", name, envName(name), v.GetString(name))}
		}
		*dst = n
		return nil
	})
}

// Duration binds a non-negative duration flag.
func (f *flagSet) Duration(dst *time.Duration, name string, def time.Duration, usage string) {
	f.FlagSet.Duration(name, def, usage)
	f.then(func(v *viper.Viper) []string {
		d, err := time.ParseDuration(v.GetString(name))
		switch {
		case err != nil:
			return []string{fmt.Sprintf("--%s (or %s): %q is not a duration (e.g. 10s)", name, envName(name), v.GetString(name))}
		case d < 0:
			return []string{"--" + name + ": must not be negative"}
		}
		*dst = d
		return nil
	})
}

// Size binds a size flag (a whole number with an optional unit, e.g.
// 1900MiB) of at least least bytes; empty leaves dst zero.
func (f *flagSet) Size(dst *int64, name string, least int64, leastText, usage string) {
	f.FlagSet.String(name, "", usage)
	f.then(func(v *viper.Viper) []string {
		if strings.TrimSpace(v.GetString(name)) == "" {
			return nil
		}
		n, err := sizeSetting(v, name)
		switch {
		case err != nil:
			return []string{err.Error()}
		case n < least:
			return []string{fmt.Sprintf("--%s (or %s): %d bytes is below the least, %s", name, envName(name), n, leastText)}
		}
		*dst = n
		return nil
	})
}

func envName(flag string) string {
	return "PIPELINE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

func intSetting(v *viper.Viper, name string) (int, error) {
	var n int
	if _, err := fmt.Sscan(v.GetString(name), &n); err != nil || fmt.Sprint(n) != strings.TrimSpace(v.GetString(name)) {
		return 0, fmt.Errorf("--%s (or %s): %q is not an integer", name, envName(name), v.GetString(name))
	}
	return n, nil
}

func int64Setting(v *viper.Viper, name string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v.GetString(name)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("--%s (or %s): %q is not an integer", name, envName(name), v.GetString(name))
	}
	return n, nil
}

// sizeUnits are the units sizeSetting takes, longest suffix first.
var sizeUnits = []struct {
	suffix string
	bytes  int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}

// sizeSetting reads a size in bytes: a whole number with an optional unit
// (B, KB, MB, GB, KiB, MiB, GiB), e.g. 1900MiB.
func sizeSetting(v *viper.Viper, name string) (int64, error) {
	s := strings.TrimSpace(v.GetString(name))
	unit := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, unit = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.bytes
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("--%s (or %s): %q is not a positive size (a whole number with an optional unit B, KB, MB, GB, KiB, MiB or GiB, e.g. 1900MiB)", name, envName(name), v.GetString(name))
	}
	return n * unit, nil
}

func boolSetting(v *viper.Viper, name string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v.GetString(name))) {
	case "true", "1", "yes":
		return true, nil
	case "false", "0", "no", "":
		return false, nil
	}
	return false, fmt.Errorf("--%s (or %s): %q is not true or false", name, envName(name), v.GetString(name))
}
