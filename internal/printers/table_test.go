package printers

import (
	"bytes"
	"strings"
	"testing"
)

func TestTableRender(t *testing.T) {
	tbl := Table{Columns: []Column{{Header: "Name"}, {Header: "Value"}, {Header: "Extra", Wide: true}}}
	tbl.AddRow("alpha", "1", "x")
	tbl.AddRow("b", "", "multi\nline\tcell")
	tests := []struct {
		name string
		opts TableOptions
		want string
	}{
		{"table", TableOptions{}, "NAME    VALUE\nalpha   1\nb       <none>\n"},
		{"wide", TableOptions{Wide: true}, "NAME    VALUE    EXTRA\nalpha   1        x\nb       <none>   multi line cell\n"},
		{"no headers", TableOptions{NoHeaders: true}, "alpha   1\nb       <none>\n"},
		{"styled header keeps alignment", TableOptions{HeaderStyle: func(s string) string { return "<" + s + ">" }},
			"<NAME    VALUE>\nalpha   1\nb       <none>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tbl.Render(&b, tt.opts); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
}

func TestSerializeKeepsU64Strings(t *testing.T) {
	doc := struct {
		Hash string `json:"hash"`
		N    int    `json:"n"`
	}{"18446744073709551615", 3}
	var j, y bytes.Buffer
	if err := JSON(&j, doc); err != nil {
		t.Fatal(err)
	}
	if err := YAML(&y, doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), `"hash": "18446744073709551615"`) {
		t.Errorf("json: %s", j.String())
	}
	if !strings.Contains(y.String(), `hash: "18446744073709551615"`) {
		t.Errorf("yaml must quote the numeric string: %s", y.String())
	}
}
