package webfont

import "errors"

// ErrMalformed is returned when the font's bytes are not a TrueType font
// Subset can read (a table missing, cut short or pointing past the end).
var ErrMalformed = errors.New("webfont: malformed font")
