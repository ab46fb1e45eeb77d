package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"zorepro/pipeline/codeid"
)

// defaultOut is where package codeid embeds the manifest from, relative to
// the module root (the directory gen is run in).
const defaultOut = "pipeline/codeid/manifest/manifest.json"

// errUsage reports a command line the flag package has already complained
// about.
var errUsage = errors.New("usage")

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		os.Exit(2) // the flag package has printed the problem and usage
	case err != nil:
		fmt.Fprintln(os.Stderr, "codeid/gen:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("gen", flag.ContinueOnError)
	fl.SetOutput(stderr)
	tags := fl.String("tags", "", "build tags, comma or space separated, exactly as passed to go build")
	out := fl.String("o", defaultOut, "output file (\"-\" for standard output)")
	stamp := fl.Bool("stamp", false, "after writing, print the Stamp of the written manifest on standard output")
	stampOf := fl.String("stamp-of", "", "only print the Stamp of this existing manifest file and exit")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: gen [-tags T] [-o FILE] [-stamp] [package ...]\n       gen -stamp-of FILE")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}

	if *stampOf != "" {
		if fl.NArg() > 0 || *stamp {
			return fmt.Errorf("-stamp-of takes no packages and no -stamp")
		}
		data, err := os.ReadFile(*stampOf)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, codeid.StampOf(data))
		return err
	}

	// The embedded manifest, and the file being replaced, describe the
	// build rather than belong to it: leave them out of codeid's own hash.
	skip := []string{defaultOut}
	if *out != "-" {
		skip = append(skip, *out)
	} else if *stamp {
		return fmt.Errorf("-stamp needs -o FILE, not standard output")
	}
	data, err := codeid.Generate(".", []string{*tags}, fl.Args(), skip...)
	if err != nil {
		return err
	}
	if *out == "-" {
		_, err = stdout.Write(data)
		return err
	}
	if err := codeid.WriteFile(*out, data); err != nil {
		return err
	}
	if *stamp {
		_, err = fmt.Fprintln(stdout, codeid.StampOf(data))
	}
	return err
}
