package cli

import "strings"

// globalFlags are the flags every client command takes (env.flags), and
// whether each takes a value.
var globalFlags = map[string]bool{"url": true, "key": true, "o": true, "output": true, "timeout": true}

// HoistGlobalFlags moves the global flags given before the command word
// to just after it, so `mqgate --url U topic list` is `mqgate topic --url
// U list` (docs/cli.md, "Global flags"). It returns the command word and
// that command's arguments; name is "" when args hold only flags. A
// leading flag that is not global, such as -h or --version, ends the
// hoisting: the caller deals with it. bad names a global flag left
// without its value.
func HoistGlobalFlags(args []string) (name string, rest []string, bad string) {
	var hoisted []string
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		flagName, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		needsValue, global := globalFlags[flagName]
		if !global {
			break
		}
		hoisted = append(hoisted, a)
		i++
		if needsValue && !hasValue {
			if i == len(args) {
				return "", nil, a
			}
			hoisted = append(hoisted, args[i])
			i++
		}
	}
	if len(hoisted) == 0 {
		if len(args) == 0 {
			return "", nil, ""
		}
		return args[0], args[1:], ""
	}
	if i == len(args) {
		return "", hoisted, ""
	}
	if args[i] == "--" || strings.HasPrefix(args[i], "-") {
		// Not a command word: leave everything for the caller's usage error.
		return args[i], args[i+1:], ""
	}
	return args[i], append(hoisted, args[i+1:]...), ""
}
