package iostreams

import "testing"

func TestColorEnabled(t *testing.T) {
	tests := []struct {
		name string
		mode ColorMode
		tty  bool
		env  map[string]string
		want bool
	}{
		{"auto tty", ColorAuto, true, nil, true},
		{"auto pipe", ColorAuto, false, nil, false},
		{"auto tty NO_COLOR", ColorAuto, true, map[string]string{"NO_COLOR": "1"}, false},
		{"auto pipe CLICOLOR_FORCE", ColorAuto, false, map[string]string{"CLICOLOR_FORCE": "1"}, true},
		{"auto CLICOLOR_FORCE=0", ColorAuto, false, map[string]string{"CLICOLOR_FORCE": "0"}, false},
		{"NO_COLOR beats CLICOLOR_FORCE", ColorAuto, true, map[string]string{"NO_COLOR": "x", "CLICOLOR_FORCE": "1"}, false},
		{"always pipe NO_COLOR", ColorAlways, false, map[string]string{"NO_COLOR": "1"}, true},
		{"never tty", ColorNever, true, map[string]string{"CLICOLOR_FORCE": "1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _, _ := Test()
			s.SetStdoutTTY(tt.tty)
			s.SetColorMode(tt.mode)
			s.SetGetenv(func(k string) string { return tt.env[k] })
			if got := s.ColorEnabled(); got != tt.want {
				t.Errorf("ColorEnabled() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseColorMode(t *testing.T) {
	for in, want := range map[string]ColorMode{"": ColorAuto, "auto": ColorAuto, "ALWAYS": ColorAlways, "never": ColorNever} {
		if got, err := ParseColorMode(in); err != nil || got != want {
			t.Errorf("ParseColorMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseColorMode("rainbow"); err == nil {
		t.Error("rainbow accepted")
	}
}
