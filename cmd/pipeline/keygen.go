package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"zorepro/pipeline/remote"
)

// keygenCmd makes an Ed25519 key pair for signing a remote's index.
type keygenCmd struct {
	to   string
	name string
}

func (c *keygenCmd) doc() commandDoc {
	return commandDoc{name: "keygen", args: "NAME", summary: "make a key pair to sign a remote's index (push --sign FILE; readers pull --trust FILE.pub)",
		detail: "Writes the private key to --to (mode 0600; keep it secret) and the public key to --to.pub (publish it)."}
}

func (c *keygenCmd) define(f *flagSet) {
	f.String(&c.to, "to", "", "the private key file to write (the public key goes to FILE.pub)")
}

func (c *keygenCmd) check(args []string) []string {
	p := oneArg("keygen", "NAME", args)
	if p == nil {
		c.name = args[0]
	}
	if c.to == "" {
		p = append(p, "pipeline keygen: --to FILE is required")
	}
	return p
}

func (c *keygenCmd) run(inv *invocation) (int, error) {
	k, err := remote.GenerateKey(c.name, rand.Reader)
	if err != nil {
		return exitInvalid, err
	}
	for _, w := range []struct {
		path string
		data []byte
	}{{c.to, k.MarshalText()}, {c.to + ".pub", k.Public().MarshalText()}} {
		path, data := w.path, w.data
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return exitInvalid, fmt.Errorf("%s exists: a key is not overwritten; choose another file", path)
		}
		if err != nil {
			return exitFailed, err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return exitFailed, err
		}
	}
	os.Chmod(c.to+".pub", 0o644)
	fmt.Fprintf(inv.stdout, "key %s: private %s (keep it secret), public %s:\n%s", c.name, c.to, c.to+".pub", k.Public().MarshalText())
	return exitOK, nil
}
