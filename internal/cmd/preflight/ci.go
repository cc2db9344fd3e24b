package preflight

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/internal/buildinfo"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/preflight"
)

// Output formats for CI: GitHub Actions workflow commands (an annotation per
// finding, shown inline on the pull request) and SARIF 2.1.0 (GitHub code
// scanning and other static-analysis viewers).
const (
	outputGitHub = "github"
	outputSARIF  = "sarif"
)

// findingsDoc is where the finding ids are explained.
const findingsDoc = "https://github.com/ai-dynamo/kubectl-dynamo/blob/main/docs/findings.md"

// printGitHub writes one workflow command per finding:
//
//	::error file=deploy/dgd.yaml,line=12,title=InvalidPolicy (certain) ns/name::message%0Afix: hint
//
// (error, warning, or notice for info), escaped as the runner requires.
func printGitHub(w io.Writer, r *preflight.Report) error {
	var b strings.Builder
	for _, f := range r.Findings {
		level := "notice"
		switch f.Severity {
		case model.SeverityError:
			level = "error"
		case model.SeverityWarning:
			level = "warning"
		}
		var props []string
		if f.File != "" {
			props = append(props, "file="+escapeProperty(ciPath(f.File)))
			if f.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", f.Line))
			}
		}
		title := fmt.Sprintf("%s (%s) %s/%s", f.ID, f.Certainty, f.Namespace, f.Deployment)
		if f.Domain != "" {
			title += " " + f.Domain
		}
		props = append(props, "title="+escapeProperty(title))
		msg := f.Message
		if f.Hint != "" {
			msg += "\nfix: " + f.Hint
		}
		fmt.Fprintf(&b, "::%s %s::%s\n", level, strings.Join(props, ","), escapeData(msg))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// escapeData and escapeProperty follow the Actions runner's command
// escaping (percent-encoding of %, CR, LF; and of : and , in properties).
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// ciPath is a manifest path as a CI system resolves it: relative to the
// working directory (the checkout) when it is under it, with forward slashes;
// standard input is "stdin".
func ciPath(p string) string {
	if p == "-" {
		return "stdin"
	}
	if filepath.IsAbs(p) {
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
				p = rel
			}
		}
	}
	return filepath.ToSlash(filepath.Clean(p))
}

// SARIF 2.1.0 (OASIS), the parts GitHub code scanning reads.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string            `json:"id"`
	Name                 string            `json:"name"`
	ShortDescription     sarifText         `json:"shortDescription"`
	HelpURI              string            `json:"helpUri"`
	DefaultConfiguration sarifRuleDefaults `json:"defaultConfiguration"`
}

type sarifRuleDefaults struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          map[string]any    `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

// ruleText says what each finding id means, for the SARIF rule list.
var ruleText = map[string]string{
	preflight.FindingInvalidManifest:               "The API server or the Dynamo operator's admission webhook rejects the DynamoGraphDeployment",
	preflight.FindingInvalidPolicy:                 "The kvTransferPolicy is rejected by the CRD schema or the webhook",
	preflight.FindingDomainLabelMissing:            "Nodes lack the label the KV-transfer policy reads",
	preflight.FindingReplicasUnschedulable:         "Replicas do not fit on the nodes they may use",
	preflight.FindingMultinodeReplicaExceedsDomain: "A multinode replica does not fit in one value of the transfer domain",
}

func sarifLevel(s model.Severity) string {
	switch s {
	case model.SeverityError:
		return "error"
	case model.SeverityWarning:
		return "warning"
	}
	return "note"
}

// printSARIF writes the report as a SARIF 2.1.0 log: one rule per finding id
// preflight can raise, one result per finding at its file and line.
func printSARIF(w io.Writer, r *preflight.Report) error {
	ids := preflight.FindingIDs()
	slices.Sort(ids)
	driver := sarifDriver{Name: "kubectl-dynamo preflight", InformationURI: "https://github.com/ai-dynamo/kubectl-dynamo/blob/main/docs/commands/preflight.md",
		Version: buildinfo.Version, Rules: []sarifRule{}}
	index := map[string]int{}
	for _, id := range ids {
		index[id] = len(driver.Rules)
		text := ruleText[id]
		if text == "" {
			text = "See " + id + " in docs/findings.md"
		}
		driver.Rules = append(driver.Rules, sarifRule{ID: id, Name: id, ShortDescription: sarifText{Text: text},
			HelpURI: findingsDoc + "#" + strings.ToLower(id), DefaultConfiguration: sarifRuleDefaults{Level: "error"}})
	}
	run := sarifRun{Tool: sarifTool{Driver: driver}, Results: []sarifResult{}}
	for _, f := range r.Findings {
		i, ok := index[f.ID]
		if !ok {
			i = len(run.Tool.Driver.Rules)
			index[f.ID] = i
			run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: f.ID, Name: f.ID, ShortDescription: sarifText{Text: "See " + f.ID + " in docs/findings.md"},
				HelpURI: findingsDoc + "#" + strings.ToLower(f.ID), DefaultConfiguration: sarifRuleDefaults{Level: sarifLevel(f.Severity)}})
		}
		msg := f.Message
		if f.Hint != "" {
			msg += "\nfix: " + f.Hint
		}
		loc := sarifPhysical{ArtifactLocation: sarifArtifact{URI: ciPath(f.File)}}
		if f.Line > 0 {
			loc.Region = &sarifRegion{StartLine: f.Line}
		}
		sum := sha256.Sum256([]byte(strings.Join([]string{f.ID, f.Namespace, f.Deployment, f.Domain, f.Field, f.Message}, "\x00")))
		props := map[string]any{"certainty": string(f.Certainty), "deployment": f.Namespace + "/" + f.Deployment}
		if f.Domain != "" {
			props["domain"] = f.Domain
		}
		if f.Field != "" {
			props["field"] = f.Field
		}
		run.Results = append(run.Results, sarifResult{RuleID: f.ID, RuleIndex: i, Level: sarifLevel(f.Severity), Message: sarifText{Text: msg},
			Locations: []sarifLocation{{PhysicalLocation: loc}}, PartialFingerprints: map[string]string{"kubectlDynamoFinding/v1": hex.EncodeToString(sum[:16])},
			Properties: props})
	}
	log := sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}
