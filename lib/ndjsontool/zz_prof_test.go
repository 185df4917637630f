package ndjsontool

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/agentry/agentry/lib/cli"
)

func TestProfVerb(t *testing.T) {
	f := os.Getenv("PROF_CORPUS")
	if f == "" { t.Skip() }
	in, _ := os.Open(f)
	defer in.Close()
	st := &Stream{In: in, Out: io.Discard, Voice: cli.Voice{}}
	var err error
	switch os.Getenv("PROF_VERB") {
	case "check":
		err = Check(context.Background(), st, CheckOptions{})
	case "get":
		err = Get(context.Background(), st, GetOptions{Paths: []string{"event.text"}, Raw: true})
	case "csv":
		err = CSV(context.Background(), st, TableOptions{Fields: []string{"type", "runId", "event.text"}, NoHeader: true})
	case "count":
		err = Count(context.Background(), st, CountOptions{Path: "type"})
	}
	if err != nil { t.Log(err) }
}
