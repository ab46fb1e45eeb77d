package remote

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Key formats: one line, "<kind> <name> <base64>".
const (
	keyKind       = "zorepro-signing-key-1"
	publicKeyKind = "zorepro-public-key-1"
)

// Key is an Ed25519 signing key with a name (who signs, e.g. "vemula-lab").
type Key struct {
	Name    string
	private ed25519.PrivateKey
}

// PublicKey is the public half of a Key.
type PublicKey struct {
	Name string
	key  ed25519.PublicKey
}

// Signature is one signature of the index.
type Signature struct {
	Key    string `json:"key"`    // the signer's name
	Public string `json:"public"` // the public key, base64
	Sig    string `json:"sig"`    // Ed25519 over the index's body, base64
}

// GenerateKey makes a key named name from rand.
func GenerateKey(name string, rand io.Reader) (*Key, error) {
	if name == "" || strings.ContainsAny(name, " \t\n") {
		return nil, fmt.Errorf("remote: key name %q: want a word without spaces", name)
	}
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return nil, err
	}
	return &Key{Name: name, private: priv}, nil
}

// Public is the key's public half.
func (k *Key) Public() PublicKey {
	return PublicKey{Name: k.Name, key: k.private.Public().(ed25519.PublicKey)}
}

// MarshalText is the key's one line (keep it secret).
func (k *Key) MarshalText() []byte {
	return []byte(keyKind + " " + k.Name + " " + base64.StdEncoding.EncodeToString(k.private.Seed()) + "\n")
}

// MarshalText is the public key's one line.
func (p PublicKey) MarshalText() []byte {
	return []byte(publicKeyKind + " " + p.Name + " " + base64.StdEncoding.EncodeToString(p.key) + "\n")
}

// ErrKey is returned for a key file that is not one.
var ErrKey = errors.New("remote: not a key")

func parseLine(text []byte, kind string, size int) (string, []byte, error) {
	f := strings.Fields(string(bytes.TrimSpace(text)))
	if len(f) != 3 || f[0] != kind {
		return "", nil, fmt.Errorf("%w: want one line %q NAME BASE64", ErrKey, kind)
	}
	b, err := base64.StdEncoding.DecodeString(f[2])
	if err != nil || len(b) != size {
		return "", nil, fmt.Errorf("%w: its key is not %d bytes of base64", ErrKey, size)
	}
	return f[1], b, nil
}

// ParseKey reads a key's line.
func ParseKey(text []byte) (*Key, error) {
	name, seed, err := parseLine(text, keyKind, ed25519.SeedSize)
	if err != nil {
		return nil, err
	}
	return &Key{Name: name, private: ed25519.NewKeyFromSeed(seed)}, nil
}

// ParsePublicKey reads a public key's line.
func ParsePublicKey(text []byte) (PublicKey, error) {
	name, pub, err := parseLine(text, publicKeyKind, ed25519.PublicKeySize)
	if err != nil {
		return PublicKey{}, err
	}
	return PublicKey{Name: name, key: pub}, nil
}

// sign replaces the index's signatures with the others that still verify
// over its body, plus k's.
func (x *Index) sign(k *Key) {
	pub := base64.StdEncoding.EncodeToString(k.Public().key)
	x.prune()
	keep := slices.DeleteFunc(x.Signatures, func(s Signature) bool { return s.Public == pub })
	x.Signatures = append(keep, Signature{Key: k.Name, Public: pub, Sig: base64.StdEncoding.EncodeToString(ed25519.Sign(k.private, x.body()))})
}

// prune drops the signatures that no longer verify (the body changed).
func (x *Index) prune() {
	body := x.body()
	var keep []Signature
	for _, s := range x.Signatures {
		if s.verifies(body) {
			keep = append(keep, s)
		}
	}
	x.Signatures = keep
}

func (s Signature) verifies(body []byte) bool {
	pub, err1 := base64.StdEncoding.DecodeString(s.Public)
	sig, err2 := base64.StdEncoding.DecodeString(s.Sig)
	return err1 == nil && err2 == nil && len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, body, sig)
}

// trustedBy returns the name of a trusted key whose signature of the
// index verifies, or ErrUntrusted saying why there is none.
func (x *Index) trustedBy(trust []PublicKey) (string, error) {
	body := x.body()
	if len(x.Signatures) == 0 {
		return "", fmt.Errorf("%w: the index is not signed", ErrUntrusted)
	}
	for _, t := range trust {
		want := base64.StdEncoding.EncodeToString(t.key)
		for _, s := range x.Signatures {
			if s.Public != want {
				continue
			}
			if !s.verifies(body) {
				return "", fmt.Errorf("%w: the signature by %s does not verify (the index was changed after it was signed)", ErrUntrusted, t.Name)
			}
			return t.Name, nil
		}
	}
	var by []string
	for _, s := range x.Signatures {
		by = append(by, s.Key)
	}
	return "", fmt.Errorf("%w: signed only by %s, none of them trusted", ErrUntrusted, strings.Join(by, ", "))
}
