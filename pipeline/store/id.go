package store

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// idPrefix names the hash in the text form of an ID, so that a later switch
// of hash function changes this file only.
const idPrefix = "xxh64-"

// ID identifies content: the xxhash64 of the bytes, stored big-endian so
// that byte order, hex order and numeric order agree. The zero ID is not the
// hash of any content this package produced and means "no ID".
type ID [8]byte

// Sum returns the ID of data.
func Sum(data []byte) ID {
	var id ID
	binary.BigEndian.PutUint64(id[:], xxhash.Sum64(data))
	return id
}

// String returns "xxh64-" followed by 16 lowercase hex digits.
func (id ID) String() string { return idPrefix + id.hex() }

// IsZero reports whether id is the zero ID.
func (id ID) IsZero() bool { return id == ID{} }

func (id ID) hex() string { return hex.EncodeToString(id[:]) }

// ParseID parses the text form produced by String.
func ParseID(s string) (ID, error) {
	var id ID
	h, ok := strings.CutPrefix(s, idPrefix)
	if !ok || !isLowerHex(h, 2*len(id)) {
		return ID{}, fmt.Errorf("%w: %q (want %s<16 lowercase hex digits>)", ErrBadID, s, idPrefix)
	}
	if _, err := hex.Decode(id[:], []byte(h)); err != nil {
		return ID{}, fmt.Errorf("%w: %q: %v", ErrBadID, s, err)
	}
	return id, nil
}

// parseHex parses the 16-hex-digit file name of an entry.
func parseHex(name string) (ID, bool) {
	var id ID
	if !isLowerHex(name, 2*len(id)) {
		return ID{}, false
	}
	_, err := hex.Decode(id[:], []byte(name))
	return id, err == nil
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
