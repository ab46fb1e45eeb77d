// Package chosenjson owns "chosen.json", the choice a tune task hands to
// the train tasks it tunes and to every reader after them (the report's
// tuning table, the figure audit, the CLI and the browser view): its type
// and its one parser.
//
// The file is a JSON object: "params" (the chosen point's hyperparameters
// with any carried ones laid under them), "point" (its index in the grid's
// point order), "score_name", "select" (min or max), "score" (its mean over
// "seeds"; a string "NaN", "+Inf" or "-Inf" where JSON has no number),
// optionally "carried" and "carried_from" (hyperparameters taken from
// another tune task), "search" (extension rounds) and "reference",
// "reference_point" (-1 when off the grid) and "reference_score" (the
// paper's choice).
//
// The writer stays in the tune stage (stages/tune) and the train stage
// keeps its own reader: moving either here would change the code identity
// of every tune or train task, and with it the reuse of stores already
// computed. This package's tests run the tune stage and check that Parse
// reads every field it writes, and nothing it does not.
package chosenjson
