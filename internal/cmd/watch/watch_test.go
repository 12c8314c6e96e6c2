package watch

import (
	"fmt"
	"testing"
)

func TestNormaliseTargets(t *testing.T) {
	got, err := normaliseTargets([]string{"127.0.0.1:9464", "https://a.example/"})
	if err != nil || fmt.Sprint(got) != "[http://127.0.0.1:9464 https://a.example]" {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := normaliseTargets([]string{"ftp://x"}); err == nil {
		t.Fatal("ftp target accepted")
	}
}
