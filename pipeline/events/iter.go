package events

import (
	"encoding/binary"
	"fmt"
	"math"

	"zorepro/pipeline/task"
)

// appendIter appends the binary value of an "iter" record (see doc.go);
// the iteration itself is in the key.
func appendIter(b []byte, it *task.Iter) []byte {
	b = binary.AppendVarint(b, it.Samples)
	b = binary.BigEndian.AppendUint64(b, it.Digest)
	b = binary.AppendUvarint(b, uint64(len(it.Metrics)))
	for _, m := range it.Metrics {
		b = binary.AppendUvarint(b, uint64(len(m.Name)))
		b = append(b, m.Name...)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(m.Value))
	}
	return b
}

// minMetricLen is the smallest encoding of a metric: a one-byte name
// length, an empty name and the 8 value bytes.
const minMetricLen = 1 + 8

// appendBlock appends the value of an "iter" key: for each iteration, in
// increasing order, uvarint(iteration − first) then its appendIter record.
// The key carries the first iteration.
func appendBlock(b []byte, its []task.Iter) []byte {
	first := its[0].Iteration
	for i := range its {
		b = binary.AppendUvarint(b, uint64(its[i].Iteration-first))
		b = appendIter(b, &its[i])
	}
	return b
}

// decodeBlock decodes a value written by appendBlock whose key holds first.
// It never panics; errors wrap ErrCorruptLog.
func decodeBlock(first int64, b []byte) ([]task.Iter, error) {
	var out []task.Iter
	prev := int64(-1)
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 || d > math.MaxInt64-uint64(first) {
			return nil, iterErr("iteration offset", b)
		}
		it, rest, err := decodeIterPrefix(b[n:])
		if err != nil {
			return nil, err
		}
		it.Iteration = first + int64(d)
		if it.Iteration <= prev {
			return nil, fmt.Errorf("%w: iter block: iteration %d out of order", ErrCorruptLog, it.Iteration)
		}
		prev = it.Iteration
		out = append(out, it)
		b = rest
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: iter block: empty", ErrCorruptLog)
	}
	return out, nil
}

// decodeIter decodes a value written by appendIter. It never panics and
// never allocates more than the input justifies; errors wrap ErrCorruptLog.
func decodeIter(b []byte) (task.Iter, error) {
	it, rest, err := decodeIterPrefix(b)
	if err != nil {
		return task.Iter{}, err
	}
	if len(rest) != 0 {
		return task.Iter{}, fmt.Errorf("%w: iter record: %d trailing bytes", ErrCorruptLog, len(rest))
	}
	return it, nil
}

// decodeIterPrefix decodes one appendIter record at the start of b and
// returns the bytes after it.
func decodeIterPrefix(b []byte) (task.Iter, []byte, error) {
	var it task.Iter
	v, n := binary.Varint(b)
	if n <= 0 {
		return task.Iter{}, nil, iterErr("samples", b)
	}
	it.Samples, b = v, b[n:]
	if len(b) < 8 {
		return task.Iter{}, nil, iterErr("digest", b)
	}
	it.Digest, b = binary.BigEndian.Uint64(b), b[8:]
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64(len(b)-n)/minMetricLen {
		return task.Iter{}, nil, iterErr("metric count", b)
	}
	b = b[n:]
	if count > 0 {
		it.Metrics = make([]task.Metric, count)
	}
	for i := range it.Metrics {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) || uint64(len(b)-n)-l < 8 {
			return task.Iter{}, nil, iterErr(fmt.Sprintf("metric %d", i), b)
		}
		b = b[n:]
		it.Metrics[i].Name, b = string(b[:l]), b[l:]
		it.Metrics[i].Value, b = math.Float64frombits(binary.BigEndian.Uint64(b)), b[8:]
	}
	return it, b, nil
}

func iterErr(field string, rest []byte) error {
	return fmt.Errorf("%w: iter record: bad %s (%d bytes left)", ErrCorruptLog, field, len(rest))
}

// Keys. bbolt keeps the slices given to Put until the transaction ends, so
// every key is a fresh slice.

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(make([]byte, 0, 4), v) }
func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), v) }

// iterKey is task ‖ run ‖ iteration.
func iterKey(task uint32, run uint64, iteration int64) []byte {
	k := make([]byte, 0, 20)
	k = binary.BigEndian.AppendUint32(k, task)
	k = binary.BigEndian.AppendUint64(k, run)
	return binary.BigEndian.AppendUint64(k, uint64(iteration))
}

// pairKey is a ‖ b for the taskevents (4+8 bytes) and runevents (8+8)
// indexes.
func pairKey(a []byte, seq uint64) []byte {
	k := make([]byte, 0, len(a)+8)
	k = append(k, a...)
	return binary.BigEndian.AppendUint64(k, seq)
}
