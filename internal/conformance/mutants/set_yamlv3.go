package main

// yamlV3Mutants break the rules the subscriptions file's decoder owns since
// it walks go.yaml.in/yaml/v3's tree, which goccy/go-yaml's parser kept
// before: a key written twice in one mapping refused (in a small mapping
// and, through a set, in a large one), goccy/go-yaml's token limits counted
// whenever the tree's bounds say one may be exceeded, a tag with no value
// refused as goccy/go-yaml refused it, and an alias before its anchor
// resolved as goccy/go-yaml's tree resolved it.
var yamlV3Mutants = []mutant{
	{Name: "config-key-written-twice-accepted", What: "a key written twice in one mapping is accepted (the later value is read, or the earlier) instead of refused with the YAML syntax error it had",
		File: "internal/config/yamlv3.go",
		Old:  "\t\tif first != nil {\n",
		New:  "\t\tif false && first != nil {\n",
		Run:  "^(TestParse_BrokenFiles|TestParse_ReadsTheFileAsGoccyYAMLDid)$", Pkg: "./internal/config"},
	{Name: "config-key-twice-large-mapping", What: "a key written twice in a mapping of more than 16 keys, looked up through a set, is accepted",
		File: "internal/config/yamlv3.go",
		Old:  "\t\t\t\tseen[k.Value] = k\n",
		New:  "\t\t\t\tseen[k.Value+\"\\x00\"] = k\n",
		Run:  "^TestParse_ReadsTheFileAsGoccyYAMLDid$", Pkg: "./internal/config"},
	{Name: "config-token-limits-never-counted", What: "goccy/go-yaml's tokens are never counted: a file over MaxTokens, a value or comment over MaxScalarSize, or tokens nesting past MaxNestingDepth is decoded",
		File: "internal/config/yamlv3.go",
		Old:  "\treturn marks > MaxTokens || s.span > MaxScalarSize || s.depth > MaxNestingDepth-depthMargin\n",
		New:  "\treturn false && (marks > MaxTokens || s.span > MaxScalarSize || s.depth > MaxNestingDepth-depthMargin)\n",
		Run:  "^(TestHostileFilesGetClearErrors|TestSizeTokenValueAndDepthLimits|TestTokenLimitsAreCountedWhenTheTreeMayExceedThem)$", Pkg: "./internal/config"},
	{Name: "config-token-count-trusts-tree-depth", What: "the tokens are counted for depth only when the tree itself nests past MaxNestingDepth, so tokens nesting 33 deep over a tree 30 deep are decoded",
		File: "internal/config/yamlv3.go",
		Old:  "s.depth > MaxNestingDepth-depthMargin\n",
		New:  "s.depth > MaxNestingDepth\n",
		Run:  "^TestTokenLimitsAreCountedWhenTheTreeMayExceedThem$", Pkg: "./internal/config"},
	{Name: "config-empty-tag-accepted", What: "a tag with no value (\"key: !!str\"), a syntax error for goccy/go-yaml, is read as an empty value",
		File: "internal/config/yamlv3.go",
		Old:  "return s.emptyTag || tabs }",
		New:  "return tabs }",
		Run:  "^TestParse_ReadsTheFileAsGoccyYAMLDid$", Pkg: "./internal/config"},
	{Name: "config-alias-before-anchor-refused", What: "an alias before its anchor, which goccy/go-yaml's tree resolved, is refused as yaml/v3 refuses it",
		File: "internal/config/decode.go",
		Old:  "if patched, ok := patchAliases(src, f); ok {",
		New:  "if patched, ok := patchAliases(src, f); ok && false {",
		Run:  "^(TestParse_BrokenFiles|TestParse_ReadsTheFileAsGoccyYAMLDid)$", Pkg: "./internal/config"},
}
