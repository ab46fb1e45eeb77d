//go:build openblas

package lenet

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
)

var update = flag.Bool("update", false, "rewrite testdata/pinned_$GOARCH.golden")

// hasAVX2FMA reads the CPU's flags as the kernel reports them, apart from
// the cgo check the package makes.
func hasAVX2FMA(t *testing.T) bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "flags") {
			f := strings.Fields(line)
			return slices.Contains(f, "avx2") && slices.Contains(f, "fma")
		}
	}
	t.Skip("no flags line in /proc/cpuinfo")
	return false
}

// On a CPU with AVX2 and FMA3, OpenBLAS computes with its Haswell kernels
// whatever the CPU model (OpenBLAS 0.3.21 picks "Prescott", its SSE3
// kernels, for a Sapphire Rapids Xeon, and "Cooperlake" for an AMD EPYC
// with AVX-512), and BLAS, which enters every MNIST task's identity, says
// so.
func TestOpenBLASPinnedCore(t *testing.T) {
	if !hasAVX2FMA(t) {
		t.Skipf("this CPU lacks AVX2 or FMA3: OpenBLAS chooses its own core (%s)", BLAS())
	}
	if !strings.Contains(BLAS(), "; core Haswell; one thread)") {
		t.Fatalf("BLAS() = %q, want the Haswell core", BLAS())
	}
}

// The pin holds against the environment: OPENBLAS_CORETYPE set to another
// core before the process starts is overridden before OpenBLAS loads.
func TestOpenBLASPinOverridesEnvironment(t *testing.T) {
	if os.Getenv("LENET_PIN_CHILD") == "1" {
		fmt.Println("BLAS:", BLAS())
		return
	}
	if !hasAVX2FMA(t) {
		t.Skip("this CPU lacks AVX2 or FMA3")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenBLASPinOverridesEnvironment$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LENET_PIN_CHILD=1", "OPENBLAS_CORETYPE=Prescott", "OPENBLAS_VERBOSE=2")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("; core Haswell; one thread)")) || !bytes.Contains(out, []byte("Core: Haswell")) {
		t.Fatalf("with OPENBLAS_CORETYPE=Prescott in the environment the child computes with:\n%s", out)
	}
}

// The pinned kernels give the same bits on every AVX2 machine: a digest of
// a forward and backward pass (batch 64, the SGD shape; batch 1, ARS's
// queries; batch 100, evaluation) against a golden value recorded on an
// Intel Xeon (Sapphire Rapids) with `go test -tags openblas -run Pinned
// -update`. A CPU that computes other bits under the same core fails here
// before it records a single MNIST result.
func TestPinnedBitsGolden(t *testing.T) {
	if !hasAVX2FMA(t) {
		t.Skip("this CPU lacks AVX2 or FMA3: no pinned core")
	}
	theta := NewParams(newRand(11))
	h := xxhash.New()
	put := func(v []float64) {
		var b [8]byte
		for _, x := range v {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
			h.Write(b[:])
		}
	}
	for _, n := range []int{64, 1, 100} {
		net := New(n)
		l, g := pass(net, theta, pixelImages(newRand(uint64(20+n)), n), testLabels(n))
		put(l)
		put(g)
		put(net.Forward(theta, pixelImages(newRand(uint64(40+n)), n), Eval, nil))
	}
	got := fmt.Sprintf("%016x\n", h.Sum64())
	path := filepath.Join("testdata", "pinned_"+runtime.GOARCH+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (record it with -update)", err)
	}
	if got != string(want) {
		t.Fatalf("pinned pass digest %s, golden %s (%s)", strings.TrimSpace(got), strings.TrimSpace(string(want)), BLAS())
	}
}
