package config

import (
	"reflect"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// The goccy/go-yaml node helpers of the infrastructure readers of lint
// --infra (internal/lint/infra/yamldoc); the subscriptions file's decoder,
// which reads go.yaml.in/yaml/v3's tree, shares typeName and JoinPath.

// NodeIsNil reports whether n is nil or a typed nil pointer.
func NodeIsNil(n ast.Node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// NodeKeyText returns a mapping key's text; ok is false for a non-scalar
// key.
func NodeKeyText(n ast.Node) (string, bool) {
	switch k := n.(type) {
	case *ast.StringNode:
		return k.Value, true
	case *ast.MappingKeyNode:
		return "", false
	case ast.ScalarNode:
		if tk := k.GetToken(); tk != nil {
			return tk.Value, true
		}
	}
	return "", false
}

// NodeKind names a node's YAML kind for error messages ("a mapping", "a
// list", "an empty value", ...; "nothing" for a nil node).
func NodeKind(n ast.Node) string {
	if NodeIsNil(n) {
		return "nothing"
	}
	if t, ok := n.(*ast.TagNode); ok && t.Start != nil {
		return "a value tagged " + t.Start.Value
	}
	return typeName(n.Type())
}

// typeName names a goccy/go-yaml node type for error messages, as NodeKind
// and kindOf do.
func typeName(t ast.NodeType) string {
	switch t {
	case ast.MappingType:
		return "a mapping"
	case ast.SequenceType:
		return "a list"
	case ast.NullType:
		return "an empty value"
	case ast.StringType, ast.LiteralType:
		return "a string"
	case ast.IntegerType:
		return "an integer"
	case ast.FloatType, ast.InfinityType, ast.NanType:
		return "a number"
	case ast.BoolType:
		return "a boolean"
	}
	return "a " + strings.ToLower(t.String())
}

// JoinPath is the field path of key under path ("a.b"; key alone at the
// top).
func JoinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
