package ndjsontool

import (
	"context"
	"strings"

	"github.com/tidwall/pretty"
)

// FmtOptions are the options of fmt.
type FmtOptions struct {
	Compact  bool // one line per value, no insignificant space
	Indent   int  // spaces per level when pretty
	SortKeys bool
	Color    bool
}

// Fmt prints every valid line pretty (indented) or compact. Key order and
// number text are kept as they were.
func Fmt(ctx context.Context, st *Stream, o FmtOptions) error {
	opts := &pretty.Options{Width: 0, Indent: strings.Repeat(" ", o.Indent), SortKeys: o.SortKeys}
	sk, err := st.eachLine(ctx, finding{}, func(out, line []byte, lv lineView) []byte {
		var b []byte
		switch {
		case o.Compact && o.SortKeys:
			b = pretty.Ugly(pretty.PrettyOptions(line, opts))
		case o.Compact:
			b = pretty.Ugly(line)
		default:
			b = pretty.PrettyOptions(line, opts)
		}
		if o.Color {
			b = pretty.Color(b, nil)
		}
		out = append(out, b...)
		if len(b) == 0 || b[len(b)-1] != '\n' {
			out = append(out, '\n')
		}
		return out
	})
	if err != nil {
		return err
	}
	return sk.report(st)
}
