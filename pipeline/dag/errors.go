package dag

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error Load returns for a bad dag file,
// profile or parameter; callers map it to exit code 2.
var ErrInvalid = errors.New("dag: invalid")

// Problem is one thing wrong with the dag file.
type Problem struct {
	File, Stage, Field, Msg string
}

func (p *Problem) Error() string {
	switch {
	case p.Stage != "" && p.Field != "":
		return fmt.Sprintf("%s: stage %q: %s: %s", p.File, p.Stage, p.Field, p.Msg)
	case p.Stage != "":
		return fmt.Sprintf("%s: stage %q: %s", p.File, p.Stage, p.Msg)
	case p.Field != "":
		return fmt.Sprintf("%s: %s: %s", p.File, p.Field, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Msg)
}

// Problems is the list of everything wrong, in a stable order.
type Problems []error

func (ps Problems) Error() string {
	s := fmt.Sprintf("%d problem", len(ps))
	if len(ps) != 1 {
		s += "s"
	}
	for _, p := range ps {
		s += "\n  " + p.Error()
	}
	return s
}

// Unwrap lets errors.Is find ErrInvalid and each problem.
func (ps Problems) Unwrap() []error { return append([]error{ErrInvalid}, ps...) }
