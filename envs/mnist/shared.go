package mnist

import "zorepro/pipeline/blob"

// shared holds the instances decoded in this process (blob.Shared), so
// that the tasks of one run that read the same generate output (every
// MNIST tune, train and evaluate task) share one decoded, read-only copy
// and read the 55 MB entry once.
var shared blob.Shared[Instance, *Instance]

// Shared implements algos.SharedLoader: the process's instance of the
// entry with content ID id, read and decoded when no task holds one. Its
// users must not modify it: every method of Instance but UnmarshalBinary
// only reads it.
func (Env) Shared(id string, read func() ([]byte, error)) (*Instance, error) {
	return shared.Get(id, read)
}
