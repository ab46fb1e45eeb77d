package stream

import "flag"

var update = flag.Bool("update", false, "print new golden values")
