package main

// docsMutants break the repository-wide documentation checks of
// internal/layers: a package comment's import claim the code contradicts,
// an import rule restated in prose, a dependency a comment forbids
// (claims_test.go); a requirement id cited and no longer defined in
// docs/requirements.md, and a document that cites a file outside the
// repository (docs_test.go); production code, a test and a Markdown
// document that cite an issue number (issues_test.go). The outside name is
// spelt in pieces so that this file does not cite it.
var docsMutants = []mutant{
	{Name: "docs-import-claim-stale", What: "a package comment's Imports claim falls behind the code (memory lists internal/message and imports internal/broker too)",
		File: "internal/broker/memory/doc.go",
		Old:  "// Imports: internal/broker, internal/message\n",
		New:  "// Imports: internal/message\n",
		Pkg:  "./internal/layers", Run: "^TestPackageDocs_ImportClaimsMatchTheCode$"},
	{Name: "docs-import-rule-in-prose", What: "the pump's package comment restates its imports in prose, which nothing checks",
		File: "internal/pump/doc.go",
		Old:  "// broker.Consumer; the consume command (internal/cmd/consume) joins the two.\n",
		New:  "// broker.Consumer. The pump imports internal/broker and internal/message only.\n",
		Pkg:  "./internal/layers", Run: "^TestPackageDocs_ImportClaimsMatchTheCode$"},
	{Name: "docs-import-forbidden", What: "the pump comes to depend on cobra, which its package comment says it must not import",
		File: "internal/pump/doc.go",
		Old:  "package pump\n",
		New:  "package pump\n\nimport _ \"github.com/spf13/cobra\"\n",
		Pkg:  "./internal/layers", Run: "^TestPackageDocs_ImportClaimsMatchTheCode$"},
	{Name: "docs-requirement-undefined", What: "docs/requirements.md loses the anchor of R-4, which the code cites everywhere",
		File: "docs/requirements.md",
		Old:  `<a id="r-4"></a>`,
		New:  `<a id="r-4-gone"></a>`,
		Pkg:  "./internal/layers", Run: "^TestDocs_RepositoryCarriesItsOwnDesign$"},
	{Name: "docs-cites-outside", What: "the README sends contributors to a design document outside the repository",
		File: "README.md",
		Old:  "- [ARCHITECTURE.md](ARCHITECTURE.md): the layers",
		New:  "- [ARCHITECTURE.md](ARCHITECTURE.md) (see ../" + "shared/" + "DES" + "IGN" + ".md): the layers",
		Pkg:  "./internal/layers", Run: "^TestDocs_RepositoryCarriesItsOwnDesign$"},
	{Name: "docs-cites-issue-number", What: "a production package comment cites the issue that asked for it instead of saying the behaviour alone",
		File: "internal/redact/redact.go",
		Old:  "// Package redact is brighter's one redaction rule (docs/security.md).\n",
		New:  "// Package redact is brighter's one redaction rule (issue 29; docs/security.md).\n",
		Pkg:  "./internal/layers", Run: "^TestDocs_GoCodeCitesNoIssueNumbers$"},
	{Name: "docs-test-cites-issue-number", What: "a test's comment cites the issue that asked for the behaviour instead of saying the behaviour alone",
		File: "internal/redact/redact_test.go",
		Old:  "// FuzzText: Text and URL never panic,",
		New:  "// FuzzText (issue 29): Text and URL never panic,",
		Pkg:  "./internal/layers", Run: "^TestDocs_GoCodeCitesNoIssueNumbers$"},
	{Name: "docs-md-cites-issue-number", What: "a document cites the issue that asked for a rule instead of saying what the rule is",
		File: "docs/security.md",
		Old:  "Each rule names the test that proves it. Every test runs",
		New:  "Each rule names the test that proves it (issue 29). Every test runs",
		Pkg:  "./internal/layers", Run: "^TestDocs_MarkdownCitesNoIssueNumbers$"},
}
