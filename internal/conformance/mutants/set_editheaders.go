package main

// editHeadersMutants are the dlq edit --headers mutants: the YAML
// the operator edits is checked as --set is.
var editHeadersMutants = []mutant{
	{Name: "edit-headers-yaml-unchecked", What: "dlq edit --headers takes a rejection key or a non-string value from the edited YAML into the copy's bag",
		File: "internal/cmd/dlq/shared/editsession.go",
		Old:  "\t\tif err := inspect.CheckEditedHeaders(m, h); err != nil {\n",
		New:  "\t\tif err := error(nil); err != nil {\n",
		Run:  "^TestDLQEdit_HeadersYAMLRefusesRejectionAndNonStringValues$", Pkg: "./internal/cmd/dlq/edit"},
	{Name: "edit-headers-bag-key-unchecked", What: "a bag key --set refuses (rejection metadata, the replay's own keys) is taken from the edited YAML",
		File: "internal/inspect/edit.go",
		Old:  "\t\tif err := CheckSetKey(k); err != nil {\n\t\t\treturn fmt.Errorf(\"bag key",
		New:  "\t\tif err := error(nil); err != nil {\n\t\t\treturn fmt.Errorf(\"bag key",
		Run:  "^TestCheckEditedHeaders_RefusesWhatSetRefuses$", Pkg: "./internal/inspect"},
}
