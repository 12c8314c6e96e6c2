package main

// docsMutants break the repository-wide documentation checks of
// internal/layers (docs_test.go): a requirement id cited and no longer
// defined in docs/requirements.md, and a document that cites a file outside
// the repository. The outside name is spelt in pieces so that this file
// does not cite it.
var docsMutants = []mutant{
	{Name: "docs-requirement-undefined", What: "docs/requirements.md loses the anchor of R-4, which the code cites everywhere",
		File: "docs/requirements.md",
		Old:  `<a id="r-4"></a>`,
		New:  `<a id="r-4-gone"></a>`,
		Pkg:  "./internal/layers", Run: "^TestDocs_RepositoryCarriesItsOwnDesign$"},
	{Name: "docs-cites-outside", What: "the README sends contributors to a design document outside the repository",
		File: "README.md",
		Old:  "- [ARCHITECTURE.md](ARCHITECTURE.md): the layers",
		New:  "- [ARCHITECTURE.md](ARCHITECTURE.md) (see ../" + "shared/" + "DESIGN" + ".md): the layers",
		Pkg:  "./internal/layers", Run: "^TestDocs_RepositoryCarriesItsOwnDesign$"},
}
