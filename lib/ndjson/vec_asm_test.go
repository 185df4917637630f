package ndjson

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// An X or Y register, or the bare X and Y that stand for one in a macro.
var mnemonic = regexp.MustCompile(`^[A-Z][A-Z0-9]*$`) // not a label, directive or macro call

var vecReg = regexp.MustCompile(`\b[XY]\d{0,2}\b`)

// legacySSE lists the instructions of an amd64 assembly file that touch an
// X or Y register without the VEX encoding (mnemonic not starting with V).
// Mixed with VEX-encoded AVX2 instructions, each one costs an SSE/AVX
// state transition on many Intel CPUs: one MOVD in a broadcast made the
// AVX2 path 6-9x slower than the scalar one there.
func legacySSE(src string) []string {
	var bad []string
	for n, line := range strings.Split(src, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		for _, ins := range strings.Split(strings.TrimSuffix(strings.TrimSpace(line), `\`), ";") {
			f := strings.Fields(ins)
			if len(f) < 2 || !mnemonic.MatchString(f[0]) || f[0] == "DATA" || f[0] == "GLOBL" || f[0] == "TEXT" {
				continue
			}
			if vecReg.MatchString(strings.Join(f[1:], " ")) && !strings.HasPrefix(f[0], "V") {
				bad = append(bad, "line "+strconv.Itoa(n+1)+": "+strings.TrimSpace(ins))
			}
		}
	}
	return bad
}

func TestVectorRoutinesAreAllVEX(t *testing.T) {
	src, err := os.ReadFile("vec_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if bad := legacySSE(string(src)); len(bad) > 0 {
		t.Errorf("legacy-SSE instructions among the AVX2 ones in vec_amd64.s:\n%s", strings.Join(bad, "\n"))
	}
}

func TestLegacySSEFindsTheOldBroadcast(t *testing.T) {
	old := "#define BCAST(v, X, Y) \\\n\tMOVL $v, AX; \\\n\tMOVD AX, X; \\\n\tVPBROADCASTB X, Y\n\tPXOR X1, X1 // zero\n\tMOVQ b_base+0(FP), SI\n"
	bad := legacySSE(old)
	if len(bad) != 2 || !strings.Contains(bad[0], "MOVD AX, X") || !strings.Contains(bad[1], "PXOR X1, X1") {
		t.Errorf("found %q", bad)
	}
}
