package pipeline

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"zorepro/pipeline/store"
)

func TestDecodeOutputsRejectsNonCanonical(t *testing.T) {
	a, b := store.Sum([]byte("a")), store.Sum([]byte("b"))
	good := encodeOutputs([]OutputEntry{{"x.csv", a, 1}, {"y.png", b, 2}})
	if es, err := DecodeOutputs(good); err != nil || len(es) != 2 {
		t.Fatalf("decode of a canonical manifest: %v, %v", es, err)
	}
	for name, text := range map[string]string{
		"no header":        "x.csv " + a.String() + " 1\n",
		"no final newline": "zorepro-outputs v1\nx.csv " + a.String() + " 1",
		"two spaces":       "zorepro-outputs v1\nx.csv  " + a.String() + " 1\n",
		"unsorted":         "zorepro-outputs v1\ny.png " + b.String() + " 2\nx.csv " + a.String() + " 1\n",
		"duplicate":        "zorepro-outputs v1\nx.csv " + a.String() + " 1\nx.csv " + b.String() + " 2\n",
		"negative size":    "zorepro-outputs v1\nx.csv " + a.String() + " -1\n",
		"plus size":        "zorepro-outputs v1\nx.csv " + a.String() + " +1\n",
		"blank line":       "zorepro-outputs v1\n\n",
		"bad id":           "zorepro-outputs v1\nx.csv xxh64-XYZ 1\n",
	} {
		if es, err := DecodeOutputs([]byte(text)); !errors.Is(err, ErrBadManifest) {
			t.Errorf("%s: decodeOutputs = %v, %v; want ErrBadManifest", name, es, err)
		}
	}
}

// FuzzDecodeOutputs checks that the output-manifest reader never panics,
// that errors wrap ErrBadManifest, and that whatever it accepts re-encodes
// to the same bytes (so it names the same output ID). The input is also
// used as an output name: a valid name survives a round trip.
func FuzzDecodeOutputs(f *testing.F) {
	a, b := store.Sum([]byte("a")), store.Sum([]byte("b"))
	f.Add(encodeOutputs(nil))
	f.Add(encodeOutputs([]OutputEntry{{"data", a, 1}}))
	f.Add(encodeOutputs([]OutputEntry{{"fig.png", a, 1 << 40}, {"fig.svg", b, 0}}))
	f.Add([]byte("zorepro-outputs v1\nb " + a.String() + " 1\na " + b.String() + " 2\n"))
	f.Add([]byte("zorepro-outputs v1\nx\u00a0y " + a.String() + " 1\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := DecodeOutputs(data)
		if err != nil {
			if !errors.Is(err, ErrBadManifest) {
				t.Fatalf("error does not wrap ErrBadManifest: %v", err)
			}
		} else {
			for i, e := range es {
				if !validOutputName(e.Name) || e.Size < 0 || i > 0 && es[i-1].Name >= e.Name {
					t.Fatalf("accepted entry %d %+v of %+v", i, e, es)
				}
			}
			if enc := encodeOutputs(slices.Clone(es)); !bytes.Equal(enc, data) {
				t.Fatalf("accepted %q, which re-encodes to %q", data, enc)
			}
		}
		name := string(data)
		enc := encodeOutputs([]OutputEntry{{name, a, int64(len(data))}})
		back, err := DecodeOutputs(enc)
		if validOutputName(name) != (err == nil) {
			t.Fatalf("output name %q (valid: %v): decode of its manifest: %v", name, validOutputName(name), err)
		}
		if err == nil && (len(back) != 1 || back[0] != (OutputEntry{name, a, int64(len(data))})) {
			t.Fatalf("output name %q round-trips to %+v", name, back)
		}
	})
}
