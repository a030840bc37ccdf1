package cmdflag

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrUnknownKey is the error of [ReadConfig] for a config file with a key
// that is not a flag name.
var ErrUnknownKey = errors.New("unknown key")

// EnvName is the environment variable of a flag: SIGNOFF_ and the flag name
// in upper case with '-' as '_'.
func EnvName(flagName string) string {
	return "SIGNOFF_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// ReadConfig reads the config file path: a YAML map whose keys are the
// flag names of fs, configFlag (the flag that names the file) excepted. A
// file with other keys is returned too, with an error wrapping
// [ErrUnknownKey] that names the first of them in sorted order.
func ReadConfig(path string, fs *flag.FlagSet, configFlag string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var file map[string]any
	if err := yaml.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	var unknown []string
	for k := range file {
		if k == configFlag || fs.Lookup(k) == nil {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return file, nil
	}
	slices.Sort(unknown)
	return file, fmt.Errorf("config %s: %w %q (keys are the flag names, see --help)", path, ErrUnknownKey, unknown[0])
}

// Fill sets every flag of fs that the command line did not set from the
// environment ([EnvName]) and then from the config file named by the flag
// configFlag (whose own value may come from the environment), as read
// returns it (nil: [ReadConfig]). A list in the file is given to the
// flag item by item when lists is set (repeatable flags), and as one value
// otherwise.
func Fill(fs *flag.FlagSet, configFlag string, read func(path string) (map[string]any, error), lists bool) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cf := fs.Lookup(configFlag)
	if cf != nil && !set[configFlag] {
		if v, ok := os.LookupEnv(EnvName(configFlag)); ok {
			if err := cf.Value.Set(v); err != nil {
				return err
			}
		}
	}
	var file map[string]any
	path := ""
	if cf != nil {
		path = cf.Value.String()
	}
	if path != "" {
		if read == nil {
			read = func(path string) (map[string]any, error) { return ReadConfig(path, fs, configFlag) }
		}
		var err error
		if file, err = read(path); err != nil {
			return err
		}
	}
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || f.Name == configFlag {
			return
		}
		if v, ok := os.LookupEnv(EnvName(f.Name)); ok {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", EnvName(f.Name), v, err))
			}
			return
		}
		v, ok := file[f.Name]
		if !ok {
			return
		}
		items, isList := v.([]any)
		if !isList || !lists {
			items = []any{v}
		}
		for _, it := range items {
			if err := f.Value.Set(fmt.Sprint(it)); err != nil {
				errs = append(errs, fmt.Errorf("config %s: %s: %w", path, f.Name, err))
			}
		}
	})
	return errors.Join(errs...)
}
