package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"zorepro/pipeline/codeid"
)

// revision is the source revision, set at link time by make build
// (-X main.revision=$(git describe --always --dirty)).
var revision string

// version describes the binary: its source revision, its code identity (the
// stamp of the embedded code manifest) and its build.
// versionInfo is what --version prints, and --version --json as JSON.
type versionInfo struct {
	Revision     string   `json:"revision"`
	CodeIdentity string   `json:"code_identity,omitempty"`
	CodeError    string   `json:"code_error,omitempty"` // why there is no code identity
	Tags         []string `json:"tags"`
	Go           string   `json:"go"`
	Platform     string   `json:"platform"`
}

func readVersion() versionInfo {
	v := versionInfo{Revision: "(unknown revision: built without make, outside git or with -buildvcs=false)", Tags: []string{}}
	if revision != "" {
		v.Revision = revision
	} else if bi, ok := debug.ReadBuildInfo(); ok {
		var r, at, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				r = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if r != "" {
			v.Revision = r
			if modified == "true" {
				v.Revision += " (with uncommitted changes)"
			}
			if at != "" {
				v.Revision += ", committed " + at
			}
		}
	}
	m, err := codeid.Embedded()
	if err != nil {
		v.CodeError = err.Error()
		v.Go, v.Platform = runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH
		return v
	}
	v.CodeIdentity = codeid.Stamp
	v.Tags = append(v.Tags, m.Tags()...)
	v.Go, v.Platform = m.GoVersion(), m.GOOS()+"/"+m.GOARCH()
	return v
}

func version() string {
	v := readVersion()
	var b strings.Builder
	rev := v.Revision
	if revision != "" {
		rev = "revision " + rev
	}
	fmt.Fprintf(&b, "pipeline %s\n", rev)
	if v.CodeError != "" {
		fmt.Fprintf(&b, "code identity: none (%s)\n", v.CodeError)
		fmt.Fprintf(&b, "go %s %s", v.Go, v.Platform)
		return b.String()
	}
	fmt.Fprintf(&b, "code identity %s (the code manifest's stamp)\n", v.CodeIdentity)
	tags := strings.Join(v.Tags, ",")
	if tags == "" {
		tags = "(none: MuJoCo tasks fail)"
	}
	fmt.Fprintf(&b, "build tags %s\n", tags)
	fmt.Fprintf(&b, "go %s %s", v.Go, v.Platform)
	return b.String()
}

func versionJSON() string {
	b, _ := json.Marshal(readVersion())
	return string(b)
}
