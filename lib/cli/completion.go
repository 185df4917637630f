package cli

import (
	"io"
	"strings"

	"github.com/alecthomas/kong"
)

type completionFlag string

// BeforeReset prints the completion script for the named shell and ends the
// program with status 0. The scripts call the binary back with COMP_LINE set,
// which Main answers from the kong grammar, so they never go stale.
func (completionFlag) BeforeReset(app *kong.Kong, kctx *kong.Context) error {
	// Hooks run before values are applied, and before a missing command
	// is an error; the traced value is already there.
	shell := ""
	for _, f := range kctx.Flags() {
		if f.Name == "completion" {
			if v, ok := kctx.FlagValue(f).(completionFlag); ok {
				shell = string(v)
			}
		}
	}
	if err := CompletionScript(app.Stdout, app.Model.Name, shell); err != nil {
		return err
	}
	app.Exit(ExitOK)
	return nil
}

// CompletionScript writes the completion script of program name for shell
// (bash, zsh or fish) to w.
func CompletionScript(w io.Writer, name, shell string) error {
	var script string
	switch shell {
	case "bash":
		script = "# bash completion for {{N}}\ncomplete -o default -C {{N}} {{N}}\n"
	case "zsh":
		script = `#compdef {{N}}
# zsh completion for {{N}}: asks {{N}} itself, through COMP_LINE.
local line="${(j: :)words[1,CURRENT]}"
local -a candidates
candidates=("${(@f)$(COMP_LINE="$line" COMP_POINT=${#line} {{N}} 2>/dev/null)}")
candidates=(${candidates:#})
if (( ${#candidates} )); then
  compadd -Q -- "${candidates[@]}"
else
  _files
fi
`
	case "fish":
		script = `# fish completion for {{N}}: asks {{N}} itself, through COMP_LINE.
function __complete_{{N}}
    set -lx COMP_LINE (commandline -cp)
    test -z (commandline -ct)
    and set COMP_LINE "$COMP_LINE "
    {{N}}
end
complete -f -c {{N}} -a "(__complete_{{N}})"
`
	default:
		return Usagef("no completion for shell %q (bash, zsh or fish)", shell)
	}
	_, err := io.WriteString(w, strings.ReplaceAll(script, "{{N}}", name))
	return err
}
