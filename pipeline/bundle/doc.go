// Package bundle moves recorded results between stores: Export writes the
// outputs and the events of a set of tasks (a target's whole upstream
// closure, tuning trials included) into one gzip-compressed, checksummed
// file; Import checks every byte of it and merges it into another store,
// so that there `pipeline run` finds the tasks cached and `audit`,
// `replay` and `verify` work on them as on the store that computed them.
//
// # Format
//
// A bundle is a gzip-compressed tar archive of:
//
//   - "cas/<id>": every content-store entry the tasks' outputs name (the
//     output manifests and their files), named by their content ID;
//   - "tasks/<n>.gob": one per task (Record, gob-encoded): the task, its action,
//     output and identity transcript, its streams event, its iteration
//     events (those of the segments that produced the output, joined as
//     provenance.Production.Iterations joins them), its notes and its
//     "done" event's data;
//   - "manifest.json", last (Manifest): the format version, the code
//     identity and profile the tasks were computed under, the targets, the
//     tasks with their action and output IDs, and the SHA-256 of every
//     other member.
//
// # Volumes
//
// A bundle too large for one file where it is to be published (a GitHub
// release asset must be under 2 GiB) is cut into volumes: Options.VolumeSize
// > 0 writes the same bytes as the one file would hold, in order, into
// File.001, File.002, … of at most that size each (each published
// atomically; volumes of an earlier export beyond the last are removed),
// and then, at File, their Index: each volume's name, size and SHA-256.
// Reading a bundle whose file is an index (not gzip) first checks every
// volume's size and SHA-256 against it, so that a missing, incomplete or
// damaged download is refused as ErrBundle naming the volume, before any
// member is read.
//
// # Import
//
// Import reads the file twice. The first pass checks every member against
// the manifest's SHA-256 and every "cas/" member against its content ID,
// and that the manifest names every member once: a damaged or altered
// bundle is refused before anything is written. Then each task's action is
// recomputed from the importing store's plan and code with the bundle's
// upstream outputs: a task whose action differs (another code identity, or
// other parameters) is not imported and is counted. A task whose action
// the store already records with another output is a reproducibility
// failure (two machines computed different bytes for the same action): the
// import is refused, naming every such task, and the store is left as it
// was. The second pass writes the entries (the store re-hashes each) and
// records the importable tasks as one run of their own ("import" in its
// start event), each with its transcript, streams, iterations, notes and
// "done" state, so that their action IDs are cached. Importing the same
// bundle again finds every task recorded and writes nothing.
package bundle
