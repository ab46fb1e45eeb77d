package codeid

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"zorepro/pipeline/atomicfile"
)

// DefaultPackage is the package pattern Generate uses when given none.
const DefaultPackage = "./cmd/pipeline"

// listFields are the go list fields Generate reads. Every *Files list but
// the test and ignored ones is compiled into (or embedded in) the package.
const listFields = "ImportPath,Dir,Standard,DepOnly,Module,Error,DepsErrors," +
	"GoFiles,CgoFiles,CFiles,CXXFiles,MFiles,HFiles,FFiles,SFiles," +
	"SwigFiles,SwigCXXFiles,SysoFiles,EmbedFiles,Imports,Deps"

// archLevelVar names the `go env` variable selecting the instruction-set
// level for each GOARCH that has one.
var archLevelVar = map[string]string{
	"386": "GO386", "amd64": "GOAMD64", "arm": "GOARM", "arm64": "GOARM64",
	"mips": "GOMIPS", "mipsle": "GOMIPS", "mips64": "GOMIPS64", "mips64le": "GOMIPS64",
	"ppc64": "GOPPC64", "ppc64le": "GOPPC64", "riscv64": "GORISCV64", "wasm": "GOWASM",
}

type listModule struct {
	Path      string
	Version   string
	Main      bool
	Dir       string
	GoVersion string
	Replace   *listModule
}

type listPackage struct {
	ImportPath string
	Dir        string
	Standard   bool
	DepOnly    bool
	Module     *listModule
	Error      *struct{ Err string }
	DepsErrors []*struct{ Err string }

	GoFiles, CgoFiles, CFiles, CXXFiles, MFiles, HFiles, FFiles, SFiles []string
	SwigFiles, SwigCXXFiles, SysoFiles, EmbedFiles                      []string

	Imports []string
	Deps    []string
}

func (p *listPackage) compiledFiles() []string {
	var all []string
	for _, l := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.CXXFiles, p.MFiles,
		p.HFiles, p.FFiles, p.SFiles, p.SwigFiles, p.SwigCXXFiles, p.SysoFiles, p.EmbedFiles} {
		all = append(all, l...)
	}
	sort.Strings(all)
	return slices.Compact(all)
}

// Generate runs `go list -deps -json [-tags T] pkgs` in the module root
// containing dir (the nearest ancestor with a go.mod, else dir itself) and
// returns the manifest as deterministic, indented JSON ending in a newline.
// Package patterns are relative to that root; with none, DefaultPackage is
// used. Tags may be given as separate values or comma/space separated
// lists; they are sorted and de-duplicated. Files in skip (absolute or
// relative to the current directory) are left out of every hash: the
// generator passes the manifest it is about to overwrite, which is itself
// embedded in package codeid and could otherwise never be a fixed point.
//
// The child go commands inherit the environment, so GOFLAGS, GOOS, GOARCH,
// CGO_ENABLED and GOWORK apply exactly as they will to the following
// `go build`.
func Generate(dir string, tags, pkgs []string, skip ...string) ([]byte, error) {
	root, err := moduleRoot(dir)
	if err != nil {
		return nil, err
	}
	tags = NormalizeTags(tags)
	if len(pkgs) == 0 {
		pkgs = []string{DefaultPackage}
	}
	env, err := goEnv(root)
	if err != nil {
		return nil, err
	}
	listed, err := goList(root, tags, pkgs)
	if err != nil {
		return nil, err
	}
	skipInfo, err := statAll(skip)
	if err != nil {
		return nil, err
	}
	out := manifestJSON{
		Format:    Format,
		GoVersion: env["GOVERSION"],
		GOOS:      env["GOOS"],
		GOARCH:    env["GOARCH"],
		Env:       map[string]string{"CGO_ENABLED": env["CGO_ENABLED"], "GOEXPERIMENT": env["GOEXPERIMENT"]},
		Tags:      tags,
		Roots:     []string{},
		Packages:  []Package{},
		External:  []ExternalPackage{},
		Modules:   []Module{},
	}
	if v := archLevelVar[out.GOARCH]; v != "" {
		out.Env[v] = env[v]
	}

	mods, dirMods, problems, err := collectPackages(&out, listed, root, skipInfo)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	for mp, lines := range dirMods {
		sort.Strings(lines)
		mods[mp].Sum = linesDigest(lines)
	}
	for _, mod := range mods {
		out.Modules = append(out.Modules, *mod)
	}
	sort.Strings(out.Roots)
	sort.Slice(out.Packages, func(i, j int) bool { return out.Packages[i].Path < out.Packages[j].Path })
	sort.Slice(out.External, func(i, j int) bool { return out.External[i].Path < out.External[j].Path })
	sort.Slice(out.Modules, func(i, j int) bool { return out.Modules[i].Path < out.Modules[j].Path })
	if _, problems := index(out); len(problems) > 0 {
		// A bug in Generate, not in the user's module: fail loudly.
		return nil, fmt.Errorf("%w: generated manifest is inconsistent: %w", ErrBadManifest, errors.Join(problems...))
	}

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("codeid: encode manifest: %w", err)
	}
	return buf.Bytes(), nil
}

// collectPackages records every listed non-standard package in out: local
// ones (and those of directory-replaced modules) hashed, external ones by
// module, with each external module's go.sum hash. It returns the modules,
// the package lines of directory-replaced modules (their hash is computed
// from them), and the problems found.
func collectPackages(out *manifestJSON, listed []*listPackage, root string, skipInfo []fs.FileInfo) (map[string]*Module, map[string][]string, []error, error) {
	var err error
	var sums map[string]string // loaded on first external module
	mods := make(map[string]*Module)
	dirMods := make(map[string][]string) // directory-replaced module -> pkg lines
	var problems []error
	for _, p := range listed {
		if p.Standard {
			continue
		}
		local := p.Module == nil || p.Module.Main
		if local && p.Module != nil && (out.Module == "" || filepath.Clean(p.Module.Dir) == root) {
			out.Module, out.Lang = p.Module.Path, p.Module.GoVersion
		}
		if local && !p.DepOnly {
			out.Roots = append(out.Roots, p.ImportPath)
		}
		dirReplaced := !local && p.Module.Replace != nil && p.Module.Replace.Version == ""
		var pkg Package
		if local || dirReplaced {
			pkg, err = hashPackage(p, skipInfo)
			if err != nil {
				problems = append(problems, err)
				continue
			}
		}
		if local {
			out.Packages = append(out.Packages, pkg)
			continue
		}
		mp := p.Module.Path
		out.External = append(out.External, ExternalPackage{Path: p.ImportPath, Module: mp})
		if dirReplaced {
			dirMods[mp] = append(dirMods[mp], "pkg "+pkg.Path+" "+pkg.Hash)
		}
		if mods[mp] != nil {
			continue
		}
		mod := &Module{Path: mp, Version: p.Module.Version}
		mods[mp] = mod
		switch r := p.Module.Replace; {
		case r == nil:
		case r.Version == "":
			mod.Replace = r.Path
			continue // Sum is computed from the packages below
		default:
			mod.Replace = r.Path + "@" + r.Version
		}
		if sums == nil {
			if sums, err = readGoSum(filepath.Join(root, "go.sum")); err != nil {
				return nil, nil, nil, err
			}
		}
		key := mp + " " + mod.Version
		if r := p.Module.Replace; r != nil {
			key = r.Path + " " + r.Version
		}
		if mod.Sum = sums[key]; mod.Sum == "" {
			problems = append(problems, fmt.Errorf("%w: %s (needed by %s); run `go mod tidy`", ErrMissingSum, strings.Replace(key, " ", "@", 1), p.ImportPath))
		}
	}
	return mods, dirMods, problems, nil
}

// NormalizeTags splits every element on commas and white space and returns
// the non-empty tags sorted and de-duplicated (never nil).
func NormalizeTags(tags []string) []string {
	out := []string{}
	for _, t := range tags {
		out = append(out, strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })...)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// moduleRoot returns the nearest ancestor of dir (inclusive) holding a
// go.mod, or dir itself if there is none; the result is absolute.
func moduleRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("codeid: module root of %s: %w", dir, err)
	}
	for d := abs; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs, nil
		}
		d = parent
	}
}

func runGo(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: go %s (in %s): %v\n%s", ErrGoList, strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func goEnv(root string) (map[string]string, error) {
	args := []string{"env", "-json", "GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED", "GOEXPERIMENT"}
	for _, v := range archLevelVar {
		if !slices.Contains(args, v) {
			args = append(args, v)
		}
	}
	out, err := runGo(root, args...)
	if err != nil {
		return nil, err
	}
	env := make(map[string]string)
	if err := json.Unmarshal(out, &env); err != nil {
		return nil, fmt.Errorf("%w: decode go env output: %v", ErrGoList, err)
	}
	if env["GOVERSION"] == "" || env["GOARCH"] == "" || env["GOOS"] == "" {
		return nil, fmt.Errorf("%w: go env reported no GOVERSION, GOOS or GOARCH", ErrGoList)
	}
	return env, nil
}

func goList(root string, tags, pkgs []string) ([]*listPackage, error) {
	// Always pass -tags, even empty, so that it overrides a -tags in
	// GOFLAGS exactly as `go build -tags "$TAGS"` does.
	args := []string{"list", "-deps", "-json=" + listFields, "-tags", strings.Join(tags, ","), "--"}
	args = append(args, pkgs...)
	out, err := runGo(root, args...)
	if err != nil {
		return nil, err
	}
	var listed []*listPackage
	var problems []error
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		p := new(listPackage)
		if err := dec.Decode(p); err != nil {
			return nil, fmt.Errorf("%w: decode go list output: %v", ErrGoList, err)
		}
		if p.Error != nil {
			problems = append(problems, fmt.Errorf("%w: %s: %s", ErrGoList, p.ImportPath, p.Error.Err))
		}
		for _, e := range p.DepsErrors {
			problems = append(problems, fmt.Errorf("%w: %s: dependency: %s", ErrGoList, p.ImportPath, e.Err))
		}
		listed = append(listed, p)
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return listed, nil
}

func statAll(paths []string) ([]fs.FileInfo, error) {
	var infos []fs.FileInfo
	for _, p := range paths {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // not there, so not embedded either
		}
		if err != nil {
			return nil, fmt.Errorf("codeid: skipped file: %w", err)
		}
		infos = append(infos, fi)
	}
	return infos, nil
}

func hashPackage(p *listPackage, skip []fs.FileInfo) (Package, error) {
	pkg := Package{
		Path:    p.ImportPath,
		Files:   []File{},
		Imports: nonNil(p.Imports),
		Deps:    nonNil(p.Deps),
	}
	sort.Strings(pkg.Imports)
	sort.Strings(pkg.Deps)
	for _, name := range p.compiledFiles() {
		path := filepath.Join(p.Dir, filepath.FromSlash(name))
		if len(skip) > 0 {
			fi, err := os.Stat(path)
			if err == nil && slices.ContainsFunc(skip, func(s fs.FileInfo) bool { return os.SameFile(fi, s) }) {
				continue
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return Package{}, fmt.Errorf("codeid: hash package %s: %w", p.ImportPath, err)
		}
		pkg.Files = append(pkg.Files, File{Name: name, Hash: Digest(data)})
	}
	pkg.Hash = PackageHash(pkg.Files)
	return pkg, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

// readGoSum maps "module version" to its "h1:" hash, ignoring the
// "/go.mod" lines. A missing go.sum yields an empty map.
func readGoSum(path string) (map[string]string, error) {
	sums := make(map[string]string)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return sums, nil
	}
	if err != nil {
		return nil, fmt.Errorf("codeid: read go.sum: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || strings.HasSuffix(fields[1], "/go.mod") || !strings.HasPrefix(fields[2], "h1:") {
			continue
		}
		sums[fields[0]+" "+fields[1]] = fields[2]
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("codeid: read go.sum %s: %w", path, err)
	}
	return sums, nil
}

// WriteFile publishes data at path atomically (atomicfile.WriteFile): a
// reader never finds a partial manifest. If path already holds exactly data
// it is left untouched.
func WriteFile(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("codeid: %w", err)
	}
	return nil
}
